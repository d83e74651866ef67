"""What an admin reads in SQL: per-day turn counts by outcome, and SQL NULL where a JSON column
has nothing (so `reply IS NULL` finds it). Runs on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import text

from sommelier.agent.model import ModelUnavailable
from sommelier.chat.service import Origin
from tests.support.chat import ANA, native
from tests.support.scripted import ScriptedModel, from_results, tools

SEARCH_RED = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})


async def _rows(app, sql: str) -> list[dict]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return [dict(r._mapping) for r in (await session.execute(text(sql))).all()]


async def test_turns_daily_counts_people_who_got_no_answer(app) -> None:  # type: ignore[no-untyped-def]
    ok = ScriptedModel([tools(SEARCH_RED), from_results()])
    await native(app, ok).turn(ANA, "A red for tonight")
    down = ScriptedModel([ModelUnavailable("connection", "the model server cannot be reached")])
    # Not a wine request (one would be answered from the catalog alone): no answer at all.
    await native(app, down).turn(ANA, "Are you there?", origin=Origin(key=7, thread=1))

    rows = await _rows(app, "SELECT channel, messages, answered, no_answer FROM admin_turns_daily")
    assert rows == [{"channel": "cli", "messages": 2, "answered": 1, "no_answer": 1}]
    calls = await _rows(app, "SELECT calls, failures FROM admin_model_calls_daily")
    assert calls[0]["failures"] >= 1


async def test_json_columns_hold_sql_null_not_the_text_null(app) -> None:  # type: ignore[no-untyped-def]
    down = ScriptedModel([ModelUnavailable("connection", "the model server cannot be reached")])
    await native(app, down).turn(ANA, "Are you there?", origin=Origin(key=8, thread=1))
    ok = ScriptedModel([tools(SEARCH_RED), from_results()])
    await native(app, ok).turn(ANA, "A red for tonight")

    user_rows = await _rows(
        app, "SELECT count(*) AS n FROM messages WHERE role = 'user' AND reply IS NULL"
    )
    assert user_rows == [{"n": 1}]
    no_reply = await _rows(
        app, "SELECT status FROM inbound_messages WHERE reply_parts IS NULL ORDER BY id"
    )
    assert [r["status"] for r in no_reply][:1] == ["error"]
