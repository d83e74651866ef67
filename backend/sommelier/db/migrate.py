"""Apply Alembic migrations from code (`sommelier db upgrade` and start-up)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config

from sommelier.db.search_objects import is_search_object


def outside_models(name: str | None) -> bool:
    """Schema objects the models do not describe, so autogenerate leaves them alone: the
    dialect-specific search objects, and procrastinate's queue (its own schema, migration
    0010)."""
    return bool(name) and (is_search_object(str(name)) or str(name).startswith("procrastinate_"))


def migrations_dir() -> Path:
    """The packaged copy in a wheel install, else the repository's top-level folder."""
    packaged = Path(__file__).resolve().parents[1] / "_migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["database_url"] = database_url
    return config


def upgrade_sync(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


async def upgrade(database_url: str, revision: str = "head") -> None:
    # Alembic's env runs its own event loop, so it gets a thread of its own.
    await asyncio.to_thread(upgrade_sync, database_url, revision)
