"""The starter catalog shipped with the package, loaded into an empty database on first run."""

from __future__ import annotations

from importlib.resources import as_file, files

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.catalog.importer import ImportReport, import_catalog
from sommelier.db.models import Wine


async def load_starter_catalog_if_empty(
    sessions: async_sessionmaker[AsyncSession],
) -> ImportReport | None:
    async with sessions() as session:
        if await session.scalar(select(func.count()).select_from(Wine)):
            return None
    with as_file(files("sommelier.catalog") / "data" / "starter_wines.csv") as path:
        return await import_catalog(sessions, [path])
