"""A photo, recognised against the catalog: OCR in a worker thread (it is CPU-bound), then the
catalog's label index (catalog/tools.py `label_index`, rebuilt after a while: an import adds
wines)."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.catalog.label_index import Recognition
from sommelier.catalog.tools import CatalogTools
from sommelier.vision.ocr import available, read_lines


class PhotoReader:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], catalog: CatalogTools | None = None
    ) -> None:
        self.catalog = catalog or CatalogTools(sessions)
        # One photo decoded and read at a time: OCR takes the CPU anyway, and six large
        # photos at once would hold six decoded images.
        self._reading = asyncio.Semaphore(1)

    @staticmethod
    def available() -> bool:
        return available()

    async def recognise(self, image: bytes) -> Recognition:
        """The photo's text and the catalog wines it shows (VisionMissing without the extra,
        UnreadableImage for bytes that are no image)."""
        async with self._reading:
            lines = await asyncio.to_thread(read_lines, image)
        index = await self.catalog.label_index()
        return await asyncio.to_thread(index.recognise, [line.text for line in lines])
