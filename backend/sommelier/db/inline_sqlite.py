"""SQLite on the event loop's own thread, behind the aiosqlite interface SQLAlchemy drives.

aiosqlite runs every call in a worker thread: four hand-offs per statement (cursor, execute,
fetch, close), each a thread wake-up and an event-loop wake-up. A turn's statements take tens
of microseconds in SQLite itself, so the hand-offs were more than half of a turn's cost (a turn
took 7-9 ms on aiosqlite and takes 3-3.5 ms here, bench/README.md). Here a call runs
where it is made: a transaction that awaits nothing else runs from start to commit without
yielding to the loop, so the turns of a busy bot take turns on one warm connection.

The one wait that would block the loop is a write lock held elsewhere: by another process
(`sommelier catalog import` next to the bot), or by a transaction of this process that is
suspended in a non-database await while another connection wants to write. The connection has
no busy timeout, so a locked database answers at once, and that call alone goes to a worker
thread to wait out the lock as aiosqlite would.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import pool
from sqlalchemy.engine import make_url

BUSY_TIMEOUT_MS = 30_000


def _locked(error: sqlite3.OperationalError) -> bool:
    """Another connection holds the lock (SQLITE_BUSY): waiting may help."""
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_BUSY


class Connection:
    """The part of aiosqlite.Connection SQLAlchemy's aiosqlite dialect calls."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection: sqlite3.Connection | None = connection
        self._tx = _Inline()  # the dialect's isolation-level setter queues through it

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._connection is None:
            raise ValueError("no active connection")
        return self._connection

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    def cursor(self) -> _CursorContext:
        return _CursorContext(self)

    async def run(self, call: Callable[..., Any], *args: Any) -> Any:
        """`call` here, or in a worker thread with a busy timeout when the file is locked."""
        try:
            return call(*args)
        except sqlite3.OperationalError as error:
            if not _locked(error):
                raise
        return await asyncio.to_thread(self._waiting, call, *args)

    def _waiting(self, call: Callable[..., Any], *args: Any) -> Any:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            return call(*args)
        finally:
            conn.execute("PRAGMA busy_timeout = 0")

    async def commit(self) -> None:
        await self.run(self._conn.commit)

    async def rollback(self) -> None:
        self._conn.rollback()

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    async def close(self) -> None:
        self.stop()

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class _Inline:
    """Runs what the dialect queues for aiosqlite's thread, at once."""

    def put_nowait(self, item: tuple[asyncio.Future[Any], Callable[[], Any]]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as error:  # the dialect awaits the future and raises it
            future.set_exception(error)


class _CursorContext:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def __aenter__(self) -> Cursor:
        return Cursor(self.connection, self.connection._conn.cursor())

    async def __aexit__(self, *_: object) -> None:
        return None


class Cursor:
    """The part of aiosqlite.Cursor SQLAlchemy's async adapter calls."""

    def __init__(self, connection: Connection, cursor: sqlite3.Cursor) -> None:
        self._connection = connection
        self._cursor = cursor

    async def execute(self, sql: str, parameters: Any = ()) -> Cursor:
        await self._connection.run(self._cursor.execute, sql, parameters)
        return self

    async def executemany(self, sql: str, parameters: Sequence[Any]) -> Cursor:
        await self._connection.run(self._cursor.executemany, sql, parameters)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value


def sqlite_engine_options(url: str) -> dict[str, Any]:
    """create_async_engine options that put a SQLite file (a sqlite+aiosqlite URL) on the loop's
    thread; none for an in-memory or URI database, which stay on aiosqlite."""
    parsed = make_url(url)
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:") or parsed.query:
        return {}

    async def connect() -> Connection:
        # Created on the loop and used from a worker thread only while a lock is waited out.
        return Connection(sqlite3.connect(database, timeout=0, check_same_thread=False))

    # One connection kept warm: transactions that await nothing else never overlap. The
    # overflow serves a session opened while another one is suspended (the catalog's names
    # read inside a turn's transaction, say); it is closed when given back.
    return {
        "async_creator": connect,
        "poolclass": pool.AsyncAdaptedQueuePool,
        "pool_size": 1,
        "max_overflow": 10,
    }
