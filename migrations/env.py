"""Alembic environment: async engine, URL from Settings, search objects kept out of autogenerate."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from sommelier.db.models import Base
from sommelier.db.search_objects import is_search_object
from sommelier.db.session import create_engine

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from sommelier.config import load_settings

    return load_settings().database_url


def include_name(name: str | None, type_: str, _parent: object) -> bool:
    # Full-text objects are dialect-specific and managed by hand in the migrations.
    return not (name and is_search_object(name))


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_name=include_name,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_engine(_url())
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_configure)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
