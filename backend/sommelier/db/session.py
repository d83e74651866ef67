"""Engine and session factory. One engine per app; nothing at module level."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from tenacity import (
    retry,
    retry_if_exception,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    if url.startswith("sqlite"):
        _make_folder(url)
        # Stock aiosqlite: statements run in its worker thread, so a lock held by another
        # process (a catalog import) is waited out there, up to `timeout` seconds, while every
        # other chat goes on.
        engine = create_async_engine(url, echo=echo, connect_args={"timeout": 30})

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            # WAL lets other processes (a catalog import, the terminal) read while one writes.
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    # No pre-ping: it costs a round trip on every checkout (12-13 % of a turn). A connection
    # the server dropped fails once, which invalidates the whole pool (SQLAlchemy's disconnect
    # handling), and recycling retires connections before idle timeouts on the way can.
    engine = create_async_engine(url, echo=echo, pool_size=10, max_overflow=20, pool_recycle=1800)
    event.listen(engine.sync_engine, "handle_error", _dropped_is_operational)
    return engine


def _dropped_is_operational(context: ExceptionContext) -> exc.DBAPIError | None:
    """A connection the server dropped mid-statement raises an OperationalError, as psycopg
    says it: asyncpg's "connection was closed in the middle of operation" reaches SQLAlchemy
    as a bare DBAPIError, which `DATABASE_ERRORS` would not know for an outage (a reply sent
    during a restart was then followed by "something went wrong")."""
    error = context.sqlalchemy_exception
    if not context.is_disconnect or error is None or isinstance(error, DATABASE_ERRORS):
        return None
    assert isinstance(error, exc.DBAPIError)
    return exc.OperationalError(
        error.statement, error.params, context.original_exception, connection_invalidated=True
    )


def _make_folder(url: str) -> None:
    """SQLite creates the file, not the folders above it (the default is a per-user folder)."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    database = make_url(url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def as_utc(value: datetime) -> datetime:
    """SQLite returns naive datetimes; everything we store is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


def insert_for(dialect: str) -> Any:
    """The INSERT construct with ON CONFLICT support of a dialect (SQLite or PostgreSQL)."""
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


def dialect_insert(session: AsyncSession, model: type[Any]) -> Any:
    """An INSERT with ON CONFLICT support for the session's database (SQLite or PostgreSQL)."""
    return insert_for(session.get_bind().dialect.name)(model)


# What a database that is down, unreachable or refusing connections raises.
DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    exc.OperationalError,
    exc.InterfaceError,
    exc.TimeoutError,
    OSError,
)


class DatabaseUnreachable(Exception):
    """The database could not be reached at start (a refused connection is an OSError, which
    alone would read as the network of whatever the command talks to next)."""


def _dropped(error: BaseException) -> bool:
    return isinstance(error, exc.DBAPIError) and error.connection_invalidated


# A connection the server dropped (a restart) fails once and invalidates the whole pool (no
# pre-ping, see `create_engine`): a turn's first statement after a restart is tried once more,
# on a new connection, instead of telling the person the records are away.
again_if_dropped = retry(
    stop=stop_after_attempt(2), retry=retry_if_exception(_dropped), reraise=True
)


# A record of what already happened (a part sent) waits out a database restart rather than
# being lost: re-running it is harmless, and losing it would send the part again on redelivery.
RECORD_PATIENCE = 60.0
patiently = retry(
    retry=retry_if_exception_type(DATABASE_ERRORS),
    wait=wait_exponential(multiplier=0.5, max=5),
    stop=stop_after_delay(RECORD_PATIENCE),
    reraise=True,
)


def describe_database(url: str) -> str:
    """The database a URL names, without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def missing_database(url: str, error: BaseException) -> str | None:
    """For a PostgreSQL database that does not exist: the `createdb` command that creates it."""
    from sqlalchemy.engine import make_url

    cause: BaseException | None = error
    while cause is not None:  # SQLAlchemy, procrastinate and psycopg wrap the server's error
        if re.search(r'database "[^"]+" does not exist', str(cause)):
            break
        cause = getattr(cause, "orig", None) or cause.__cause__
    parsed = make_url(url)
    if cause is None or not parsed.get_backend_name().startswith("postgres"):
        return None
    options = [
        f"-h {parsed.host}" if parsed.host else "",
        f"-p {parsed.port}" if parsed.port else "",
        f"-U {parsed.username}" if parsed.username else "",
    ]
    return " ".join(["createdb", *filter(None, options), str(parsed.database)])


def database_problem(error: BaseException) -> str:
    """One line for a person: what went wrong, without a traceback."""
    original = getattr(error, "orig", None) or error
    text = str(original).strip().splitlines()[0] if str(original).strip() else ""
    return text or type(original).__name__
