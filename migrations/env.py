"""Alembic environment: async engine, URL from Settings, search objects kept out of autogenerate."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from sommelier.db.migrate import outside_models
from sommelier.db.models import Base
from sommelier.db.session import create_engine

MIGRATION_LOCK = 0x534D_4D49  # "SMMI"
config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from sommelier.config import load_settings

    return load_settings().database_url


def include_name(name: str | None, type_: str, _parent: object) -> bool:
    # Full-text objects are dialect-specific and managed by hand in the migrations; the
    # queue's are procrastinate's.
    return not outside_models(name)


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_name=include_name,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # The bot and its workers start together and each applies the migrations: one at
            # a time, the others then find the schema current.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
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
