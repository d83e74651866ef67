"""A photo, recognised against the catalog: OCR in a worker thread (it is CPU-bound), then the
catalog's label index, rebuilt when it is older than `max_age` (an import adds wines)."""

from __future__ import annotations

import asyncio
import time

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.db.models import Wine
from sommelier.vision.labels import LabelIndex, LabelWine, Recognition
from sommelier.vision.ocr import available, read_lines


async def load_index(session: AsyncSession) -> LabelIndex:
    rows = await session.execute(
        select(Wine.external_id, Wine.name, Wine.producer, Wine.region, Wine.vintage)
    )
    return LabelIndex(LabelWine(*row) for row in rows)


class PhotoReader:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], max_age: float = 600.0):
        self.sessions = sessions
        self.max_age = max_age
        self._index: tuple[float, LabelIndex] | None = None
        self._building = asyncio.Lock()
        # One photo decoded and read at a time: OCR takes the CPU anyway, and six large
        # photos at once would hold six decoded images.
        self._reading = asyncio.Semaphore(1)

    @staticmethod
    def available() -> bool:
        return available()

    async def index(self) -> LabelIndex:
        async with self._building:
            if self._index is None or time.monotonic() - self._index[0] > self.max_age:
                async with self.sessions() as session:
                    self._index = (time.monotonic(), await load_index(session))
            return self._index[1]

    async def recognise(self, image: bytes) -> Recognition:
        """The photo's text and the catalog wines it shows (VisionMissing without the extra,
        UnreadableImage for bytes that are no image)."""
        async with self._reading:
            lines = await asyncio.to_thread(read_lines, image)
        index = await self.index()
        return await asyncio.to_thread(index.recognise, [line.text for line in lines])
