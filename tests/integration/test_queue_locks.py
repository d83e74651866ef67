"""A worker frozen right after it took a job (a GC pause, a stopped VM) must not hold the other
workers up: their start (pruning dead workers) and their retry of its job go ahead at once."""

from __future__ import annotations

import asyncpg
import pytest

from sommelier.bot.queue import TASK, queue_app
from tests.support.databases import DatabaseFactory

pytestmark = pytest.mark.postgres


async def test_a_worker_frozen_after_taking_a_job_leaves_nothing_locked(
    db_factory: DatabaseFactory,
) -> None:
    url = await db_factory.postgres()
    queue = queue_app(url)
    other = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    try:
        async with queue.open_async():
            await queue.configure_task(TASK, lock="telegram-chat:1").defer_async(update={})
            pool = queue.connector.pool  # type: ignore[attr-defined]
            async with pool.connection() as frozen:
                # The worker takes the job as procrastinate does, then "freezes": the
                # connection is not given back to the pool, so nothing more is sent on it.
                worker = (
                    await (
                        await frozen.execute(
                            "SELECT worker_id FROM procrastinate_register_worker_v1()"
                        )
                    ).fetchone()
                )[0]
                taken = await (
                    await frozen.execute(
                        "SELECT id FROM procrastinate_fetch_job_v2(NULL, %s)", (worker,)
                    )
                ).fetchone()
                assert taken is not None and taken[0] is not None
                # Another worker starts and finds this one dead: it deletes its row (the job
                # is let go) and runs the job again, without waiting for the frozen one.
                await other.execute("SET lock_timeout = '2s'")
                await other.execute("DELETE FROM procrastinate_workers WHERE id = $1", worker)
                status = await other.fetchval(
                    "UPDATE procrastinate_jobs SET status = 'todo' WHERE id = $1 RETURNING status",
                    taken[0],
                )
                assert status == "todo"
    finally:
        await other.close()
        await db_factory.release(url)
