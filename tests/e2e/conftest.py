"""Fixtures of the tests with PostgreSQL and separate bot processes."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from sommelier.app import App
from sommelier.catalog.starter import load_starter_catalog_if_empty
from tests.conftest import make_settings
from tests.support.databases import DatabaseFactory
from tests.support.fake_openai import FakeOpenAI
from tests.support.processes import Processes, slow_answers
from tests.support.telegram import new_token


@pytest_asyncio.fixture
async def pg_app(db_factory: DatabaseFactory) -> AsyncIterator[App]:
    url = await db_factory.postgres()
    app = App.build(make_settings(url))
    await load_starter_catalog_if_empty(app.sessions)
    yield app
    await app.aclose()
    await db_factory.release(url)


@pytest.fixture
def slow_model() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    fake.default = slow_answers(2.0)
    fake.start()
    yield fake
    fake.stop()


@pytest_asyncio.fixture
async def processes(pg_app, telegram_emulator, slow_model, tmp_path) -> AsyncIterator[Processes]:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOMMELIER_")}
    env.update(
        {
            "SOMMELIER_TELEGRAM_BOT_TOKEN": new_token(),
            "SOMMELIER_TELEGRAM_BASE_URL": telegram_emulator.url,
            "SOMMELIER_DATABASE_URL": pg_app.settings.database_url,
            "SOMMELIER_TELEGRAM_QUEUE": "true",
            # Two turns at once per worker, so that several workers share the chats.
            "SOMMELIER_TELEGRAM_MAX_CONCURRENT_UPDATES": "2",
            "SOMMELIER_LLM_BASE_URL": slow_model.base_url,
            "SOMMELIER_LLM_CONCURRENCY": "8",
            "SOMMELIER_AGENT_STRATEGY": "native",
            "SOMMELIER_LOAD_STARTER_CATALOG": "false",
        }
    )
    running = Processes(env, tmp_path)
    yield running
    await running.stop_all()
