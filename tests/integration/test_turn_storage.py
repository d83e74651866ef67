"""What an answered turn leaves in SQL, on SQLite and PostgreSQL (where the start is two
statements without a transaction and the answer is stored by one statement)."""

from __future__ import annotations

from sqlalchemy import select

from sommelier.chat.service import Origin
from sommelier.db.models import Conversation, InboundMessage, Message, ModelCall
from sommelier.db.session import as_utc
from tests.support.chat import ANA, native
from tests.support.scripted import ScriptedModel, answer, reply, tools

SEARCH_RED = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})
STEAK = "a red under 20 euros for steak"
LAMB = "and a red under 20 euros for lamb?"


def _answers(turns: int) -> ScriptedModel:
    steps = []
    for i in range(turns):
        steps += [tools(SEARCH_RED), answer(reply(["sm-059"], intro=f"Answer {i}."))]
    return ScriptedModel(steps)


async def test_an_answer_is_stored_with_its_calls_and_its_inbound_status(app) -> None:  # type: ignore[no-untyped-def]
    model = _answers(2)
    chat = native(app, model)
    first = await chat.turn(ANA, STEAK, origin=Origin(key=31))
    second = await chat.turn(ANA, LAMB, origin=Origin(key=32))
    assert first.ok and second.ok
    # The second turn went on with the first's conversation and saw its exchange.
    assert second.conversation_id == first.conversation_id
    history = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "assistant"]
    assert "I suggested: sm-059" in history[0]

    async with app.sessions() as session:
        messages = (await session.scalars(select(Message).order_by(Message.id))).all()
        calls = (await session.scalars(select(ModelCall).order_by(ModelCall.id))).all()
        inbound = (await session.scalars(select(InboundMessage).order_by(InboundMessage.id))).all()
        conversation = await session.get(Conversation, first.conversation_id)
    assert [(m.role, m.text) for m in messages][::2] == [
        ("user", STEAK),
        ("user", LAMB),
    ]
    assert [m.id for m in messages if m.role == "assistant"] == [
        first.message_id,
        second.message_id,
    ]
    assert messages[1].wine_ids == ["sm-059"] and messages[1].reply is not None
    assert [c.message_id for c in calls] == [first.message_id] * 2 + [second.message_id] * 2
    assert [c.purpose for c in calls[:2]] == ["tool_round", "answer"]
    assert [(i.status, i.reply_message_id) for i in inbound] == [
        ("ok", first.message_id),
        ("ok", second.message_id),
    ]
    assert all(i.finished_at is not None for i in inbound)
    assert conversation is not None
    assert as_utc(conversation.last_activity_at) == as_utc(messages[-1].created_at)


async def test_a_redelivered_update_that_was_answered_runs_nothing(app) -> None:  # type: ignore[no-untyped-def]
    chat = native(app, _answers(2))
    first = await chat.turn(ANA, STEAK, origin=Origin(key=41))
    again = await chat.turn(ANA, STEAK, origin=Origin(key=41))
    assert first.ok
    assert again.status == "duplicate" and again.inbound_id == first.inbound_id
    async with app.sessions() as session:
        assert len((await session.scalars(select(Message))).all()) == 2
