"""Models and migrations agree, on SQLite and PostgreSQL, and the admin views answer."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from sommelier.db.migrate import outside_models, upgrade
from sommelier.db.models import Base
from sommelier.db.session import create_engine
from tests.support.databases import DatabaseFactory


def _diff(connection) -> list:  # type: ignore[no-untyped-def]
    context = MigrationContext.configure(
        connection,
        opts={
            "include_name": lambda name, *_: not outside_models(name),
            "compare_type": True,
        },
    )
    return compare_metadata(context, Base.metadata)


async def _fresh_url(kind: str, factory: DatabaseFactory, tmp_path) -> str:  # type: ignore[no-untyped-def]
    if kind == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}"
    return await factory.empty_postgres()


async def test_autogenerate_finds_no_difference(db_kind, db_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = await _fresh_url(db_kind, db_factory, tmp_path)
    await upgrade(url)
    engine = create_engine(url)
    async with engine.connect() as conn:
        diff = await conn.run_sync(_diff)
    await engine.dispose()
    assert diff == []


async def test_downgrade_and_upgrade_again(db_kind, db_factory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = await _fresh_url(db_kind, db_factory, tmp_path)
    await upgrade(url)
    import asyncio

    from alembic import command

    from sommelier.db.migrate import alembic_config

    await asyncio.to_thread(command.downgrade, alembic_config(url), "base")
    await upgrade(url)
    engine = create_engine(url)
    async with engine.connect() as conn:
        count = await conn.scalar(text("SELECT count(*) FROM wines"))
    await engine.dispose()
    assert count == 0


async def test_admin_views_answer_the_admin_questions(empty_app) -> None:  # type: ignore[no-untyped-def]
    async with empty_app.sessions() as session, session.begin():
        await session.execute(
            text(
                "INSERT INTO users (id, local_name, display_name, created_at) "
                "VALUES (1, 'ana', 'Ana', CURRENT_TIMESTAMP)"
            )
        )
        await session.execute(
            text(
                "INSERT INTO conversations (id, user_id, channel, started_at, last_activity_at) "
                "VALUES (7, 1, 'cli', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        for role in ("user", "assistant", "user"):
            await session.execute(
                text(
                    "INSERT INTO messages (conversation_id, role, text, created_at) "
                    "VALUES (7, :role, 'hi', CURRENT_TIMESTAMP)"
                ),
                {"role": role},
            )
        for attempt, (purpose, outcome) in enumerate(
            [("answer", "invalid"), ("repair", "invalid"), ("repair", "ok")], start=1
        ):
            await session.execute(
                text(
                    "INSERT INTO model_calls (conversation_id, turn_id, attempt, purpose, "
                    "recovery_level, model, latency_ms, outcome, created_at) VALUES "
                    "(7, 't1', :a, :p, 1, 'm', 100, :o, CURRENT_TIMESTAMP)"
                ),
                {"a": attempt, "p": purpose, "o": outcome},
            )
    async with empty_app.sessions() as session:
        recent = (
            await session.execute(
                text(
                    "SELECT display_name, message_count, model_call_count FROM "
                    "admin_recent_conversations"
                )
            )
        ).one()
        daily = (
            await session.execute(
                text("SELECT calls, turns, retries, failures FROM admin_model_calls_daily")
            )
        ).one()
    assert tuple(recent) == ("Ana", 3, 3)
    assert tuple(daily) == (3, 1, 2, 2)
