"""Helpers shared by the benchmarks: fresh databases, timing and figure printing."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import asyncpg

from sommelier.app import App
from sommelier.config import Settings
from sommelier.db.migrate import upgrade

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
ROOT = Path(__file__).resolve().parents[1]
XWINES = ROOT.parent / "shared" / "data" / "xwines"


@asynccontextmanager
async def fresh_app(kind: str, **settings: object) -> AsyncIterator[App]:
    """A migrated, empty database of `kind` (sqlite | postgres), dropped afterwards."""
    tmp = tempfile.TemporaryDirectory()
    name = f"sommelier_bench_{uuid.uuid4().hex[:8]}"
    if kind == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp.name}/bench.db"
    else:
        conn = await asyncpg.connect(PG_ADMIN)
        await conn.execute(f'CREATE DATABASE "{name}"')
        await conn.close()
        url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    await upgrade(url)
    app = App.build(bench_settings(url, **settings))
    try:
        yield app
    finally:
        await app.aclose()
        if kind == "postgres":
            conn = await asyncpg.connect(PG_ADMIN)
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.close()
        tmp.cleanup()


def bench_settings(url: str, **settings: object) -> Settings:
    # The scripted model stands for a hosted endpoint that takes every call at once: the
    # endpoint's queue (agent/admission.py) must not serialise the turns being measured.
    settings.setdefault("llm_concurrency", 1000)
    return Settings(_env_file=None, database_url=url, auto_migrate=False, **settings)  # type: ignore[call-arg]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def report(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"\n{title}")
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key.ljust(width)}  {value}")


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.seconds = time.perf_counter() - self.start


def run(main) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(main())
