"""Every reply rule that fires is recorded where an operator and an admin look: on the model
call's row (`model_calls.rules`), in the daily view of firings, and in the turn's result the
evaluation counts. On SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import text

from tests.support.chat import ANA, native
from tests.support.scripted import ScriptedModel, answer, reply, tools

SEARCH_STEAK = ("search_wines", {"type": "red", "food": "beef", "max_price": 20})


async def test_a_mended_answer_records_its_firings_on_the_call_and_in_the_daily_view(app) -> None:  # type: ignore[no-untyped-def]
    # A small model's habits: an id written into the text, and a false fact (the Malbec is from
    # Argentina, not the Barossa Valley).
    written = reply(
        ["sm-059"],
        intro="Try sm-059 for your steak.",
        closing="Enjoy!",
    )
    written["wines"][0]["why"] = "Plush and dark. A Shiraz from the Barossa Valley."
    model = ScriptedModel([tools(SEARCH_STEAK), answer(written)])
    # The model writes a sentence of its own per wine (a strong model's setting), checked.
    result = await native(app, model, wine_sentence="model").turn(
        ANA, "A red for steak under 20 euros"
    )
    assert result.ok and "Barossa" not in result.text and "sm-059" not in result.text

    async with app.sessions() as session:
        rows = (
            await session.execute(text("SELECT purpose, rules FROM model_calls ORDER BY id"))
        ).all()
        daily = (
            await session.execute(
                text("SELECT rule, firings, turns FROM admin_rule_firings_daily ORDER BY rule")
            )
        ).all()
    fired = [r for purpose, rules in rows if purpose == "answer" for r in _list(rules)]
    assert "ids_named" in fired and "false_facts_out" in fired
    assert {(rule, firings, turns) for rule, firings, turns in daily} >= {
        ("ids_named", 1, 1),
        ("false_facts_out", 1, 1),
    }


def _list(value: object) -> list[str]:
    import json

    return json.loads(value) if isinstance(value, str) else list(value or [])  # type: ignore[call-overload]
