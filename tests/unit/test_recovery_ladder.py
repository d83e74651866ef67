"""The recovery ladder: repair (level 1) → compaction (level 2) → reset (level 3)."""

import json
import logging

from sqlalchemy import select

from sommelier.agent.messages import assistant, user
from sommelier.chat.service import FRIENDLY
from sommelier.chat.summary import summarize_request
from sommelier.db.models import Conversation
from tests.support.chat import ANA, model_calls, service, stored_messages
from tests.support.scripted import ScriptedModel, answer, reply


async def conversations(app):  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return list((await session.scalars(select(Conversation).order_by(Conversation.id))).all())


async def test_success_at_level_1(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([answer("oops"), answer(reply(["sm-058"]))])
    result = await service(sqlite_app, model).turn(ANA, "argentinian red")
    assert result.ok
    assert [(c.purpose, c.recovery_level) for c in await model_calls(sqlite_app)] == [
        ("answer", 0),
        ("repair", 1),
    ]


async def test_success_at_level_2_with_a_rebuilt_context(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            answer("bad 1"),
            answer("bad 2"),
            answer("bad 3"),
            answer(reply(["sm-059"])),
        ]
    )
    chat = service(sqlite_app, model)
    with caplog.at_level(logging.INFO):
        result = await chat.turn(ANA, "an argentinian red under 20 euros for steak, no merlot")
    assert result.ok and result.cards[0].wine_id == "sm-059"
    compact = model.requests[-1]["messages"]
    assert [m["role"] for m in compact] == ["system", "system", "system", "user"]
    assert compact[0]["content"].startswith("You are Sommelier")
    assert "one JSON object" in compact[-1]["content"]  # the protocol's own request
    summary = compact[1]["content"]
    assert "budget: about 20" in summary and "food wanted: steak" in summary
    assert "grapes refused: merlot" in summary and "countries wanted: argentinian" not in summary
    assert "Catena Malbec" in compact[2]["content"]  # this turn's tool results, for grounding
    assert "bad 1" not in json.dumps(compact)  # the failed attempts are gone
    assert model.requests[-1]["tools"] is None
    calls = await model_calls(sqlite_app)
    assert [(c.purpose, c.recovery_level, c.outcome) for c in calls][-1] == ("compaction", 2, "ok")
    assert "structured output recovered by compaction" in caplog.text
    # The conversation goes on normally.
    assert [m.role for m in await stored_messages(sqlite_app)] == ["user", "assistant"]


async def test_level_2_keeps_grounding_to_this_turns_tool_results(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([answer("x"), answer("y"), answer("z"), answer(reply(["sm-001"]))])
    result = await service(sqlite_app, model).turn(ANA, "argentinian red")
    assert result.status == "reset"  # sm-001 (a Margaux) was never in this turn's results
    assert (await model_calls(sqlite_app))[-1].error_kind == "grounding"


async def test_reset_at_level_3_closes_the_conversation(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    hello = answer(reply([], "informational", intro="Hi!"))
    model = ScriptedModel([answer("bad")] * 4 + [hello])  # no search, so no planning call
    chat = service(sqlite_app, model)
    with caplog.at_level(logging.INFO):
        result = await chat.turn(ANA, "what is the secret wish of every wine lover?")
    assert result.status == "reset" and result.text == FRIENDLY["reset"]
    assert len(model.requests) == 4
    (conversation,) = await conversations(sqlite_app)
    assert conversation.closed_at is not None and conversation.close_reason == "reset"
    assert await stored_messages(sqlite_app) == []
    reset_log = next(r for r in caplog.records if getattr(r, "event", None) == "turn_reset")
    assert reset_log.levelno == logging.ERROR and "secret wish" in reset_log.messages
    assert len(reset_log.errors) == 4
    # The next message starts fresh.
    after = await chat.turn(ANA, "hello")
    assert after.ok and after.conversation_id != conversation.id
    assert "assistant" not in [m["role"] for m in model.requests[-1]["messages"]]


async def test_reset_log_is_masked_when_masking_is_on(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([answer("bad")] * 4)
    with caplog.at_level(logging.ERROR):
        await service(sqlite_app, model, trace_mask_text=True).turn(
            ANA, "what is my secret wish for a wine?"
        )
    reset_log = next(r for r in caplog.records if getattr(r, "event", None) == "turn_reset")
    assert "secret" not in reset_log.messages and "xx xxxxxx xxxx" in reset_log.messages


def test_rule_based_summary_collects_the_constraints() -> None:
    summary = summarize_request(
        [
            user("Something for a birthday dinner, a sweet white please, under €30"),
            assistant("{...}"),
            user("I don't like chardonnay, and no France. Maybe Germany? We eat spicy food."),
        ]
    )
    assert "budget: about 30" in summary
    assert "colour/style wanted: white" in summary and "sweetness wanted: sweet" in summary
    assert "grapes refused: chardonnay" in summary
    assert "countries wanted: germany" in summary and "countries refused: france" in summary
    assert "food wanted: spicy" in summary and "occasion: birthday" in summary
    assert "latest request: i don't like chardonnay" in summary
