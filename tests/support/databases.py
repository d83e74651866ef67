"""Fresh, migrated databases for tests: SQLite files and PostgreSQL databases.

Each kind is migrated once per test session into a template; every test then gets its own copy
(a file copy for SQLite, CREATE DATABASE … TEMPLATE for PostgreSQL), so tests stay isolated and
fast. A PostgreSQL database is not dropped when its test ends (a DROP costs about a second):
its tables are emptied and it goes back into a pool for the next test, as clean as a copy.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import asyncpg

from sommelier.db.migrate import upgrade

PG_ADMIN_DSN = os.environ.get(
    "SOMMELIER_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def pg_url(dbname: str) -> str:
    base, _, _ = PG_ADMIN_DSN.rpartition("/")
    return f"{base}/{dbname}".replace("postgresql://", "postgresql+asyncpg://", 1)


async def pg_execute(sql: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


class DatabaseFactory:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._sqlite_template: Path | None = None
        self._pg_template: str | None = None
        self._pg_created: list[str] = []
        self._pg_pool: list[str] = []

    async def sqlite(self) -> str:
        if self._sqlite_template is None:
            template = self.workdir / "template.db"
            await upgrade(f"sqlite+aiosqlite:///{template}")
            self._sqlite_template = template
        target = self.workdir / f"{uuid.uuid4().hex}.db"
        shutil.copy(self._sqlite_template, target)
        return f"sqlite+aiosqlite:///{target}"

    async def postgres(self) -> str:
        if self._pg_pool:
            return pg_url(self._pg_pool.pop())
        if self._pg_template is None:
            name = f"sommelier_tpl_{uuid.uuid4().hex[:10]}"
            await pg_execute(f'CREATE DATABASE "{name}"')
            self._pg_created.append(name)
            await upgrade(pg_url(name))
            self._pg_template = name
        name = f"sommelier_t_{uuid.uuid4().hex[:12]}"
        await pg_execute(f'CREATE DATABASE "{name}" TEMPLATE "{self._pg_template}"')
        self._pg_created.append(name)
        return pg_url(name)

    async def empty_postgres(self) -> str:
        name = f"sommelier_e_{uuid.uuid4().hex[:12]}"
        await pg_execute(f'CREATE DATABASE "{name}"')
        self._pg_created.append(name)
        return pg_url(name)

    async def release(self, url: str) -> None:
        """A test is done with a database: empty it and keep it for the next test."""
        name = url.rpartition("/")[2]
        if not name.startswith("sommelier_t_"):
            return
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
        try:
            # Whatever a test left connected must not hold the tables.
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                name,
            )
            tables = await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'alembic_version'"
            )
            names = ", ".join(f'"{t["tablename"]}"' for t in tables)
            await conn.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        finally:
            await conn.close()
        self._pg_pool.append(name)

    async def drop_all(self) -> None:
        for name in reversed(self._pg_created):
            await pg_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._pg_created.clear()
