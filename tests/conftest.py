from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from sommelier.app import App
from sommelier.catalog.starter import load_starter_catalog_if_empty
from sommelier.config import Settings
from tests.support.databases import DatabaseFactory
from tests.support.fake_openai import FakeOpenAI
from tests.support.telegram import Emulator

ROOT = Path(__file__).resolve().parents[1]
# Small CC0 slices shipped with the tests: a clone with nothing beside it runs them all.
XWINES = ROOT / "tests" / "fixtures" / "xwines"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's .env or SOMMELIER_ variables."""
    import os

    for key in list(os.environ):
        if key.startswith(("SOMMELIER_", "LANGFUSE_")) and key != "SOMMELIER_TEST_POSTGRES_DSN":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    # The default database lives in the user's data folder: never the developer's own.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def db_factory(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DatabaseFactory]:
    factory = DatabaseFactory(tmp_path_factory.mktemp("databases"))
    yield factory
    await factory.drop_all()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest_asyncio.fixture
async def db_url(db_kind: str, db_factory: DatabaseFactory) -> AsyncIterator[str]:
    url = await (db_factory.sqlite() if db_kind == "sqlite" else db_factory.postgres())
    yield url
    if db_kind == "postgres":
        await db_factory.release(url)


@pytest_asyncio.fixture
async def sqlite_url(db_factory: DatabaseFactory) -> str:
    return await db_factory.sqlite()


def make_settings(database_url: str, **overrides: object) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=database_url,
        auto_migrate=False,
        load_starter_catalog=False,
        **overrides,  # type: ignore[arg-type]
    )


@pytest_asyncio.fixture
async def empty_app(db_url: str) -> AsyncIterator[App]:
    """An app on a migrated database with no wines."""
    app = App.build(make_settings(db_url))
    yield app
    await app.aclose()


@pytest_asyncio.fixture
async def app(empty_app: App) -> App:
    """An app on a migrated database holding the starter catalog."""
    await load_starter_catalog_if_empty(empty_app.sessions)
    return empty_app


@pytest_asyncio.fixture
async def sqlite_app(sqlite_url: str) -> AsyncIterator[App]:
    app = App.build(make_settings(sqlite_url))
    await load_starter_catalog_if_empty(app.sessions)
    yield app
    await app.aclose()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def telegram_emulator() -> Iterator[Emulator]:
    emulator = Emulator()
    yield emulator
    emulator.stop()
