"""Builds the object graph from Settings. No module-level singletons: tests build their own."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from sommelier.catalog.starter import load_starter_catalog_if_empty
from sommelier.config import Settings
from sommelier.db.migrate import upgrade
from sommelier.db.session import create_engine, session_factory


@dataclass
class App:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    _closers: list = field(default_factory=list)

    @classmethod
    def build(cls, settings: Settings) -> App:
        engine = create_engine(settings.database_url, echo=settings.database_echo)
        return cls(settings=settings, engine=engine, sessions=session_factory(engine))

    async def prepare(self) -> None:
        """Migrations and the starter catalog, so every command works on a fresh machine."""
        if self.settings.auto_migrate:
            await upgrade(self.settings.database_url)
        if self.settings.load_starter_catalog:
            await load_starter_catalog_if_empty(self.sessions)

    async def aclose(self) -> None:
        for closer in reversed(self._closers):
            await closer()
        await self.engine.dispose()
