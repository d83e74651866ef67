"""Real turns (SQLite, starter catalog) against a scripted in-process model."""

import json
import logging
from datetime import timedelta

import pytest
from sqlalchemy import update

from sommelier.agent.llm import Completion, ModelUnavailable
from sommelier.chat.service import FRIENDLY
from sommelier.db.models import Conversation, utcnow
from tests.support.chat import ANA, inbound, model_calls, service, stored_messages
from tests.support.scripted import ScriptedModel, answer, reply, tools

SEARCH_RED = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})


def feedback_messages(model: ScriptedModel, call: int) -> list[str]:
    return [
        m["content"]
        for m in model.requests[call]["messages"]
        if m["role"] == "user" and m["content"].startswith("Your previous answer")
    ]


async def test_valid_first_answer_makes_no_retry(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([tools(SEARCH_RED), answer(reply(["sm-059"]))])
    result = await service(sqlite_app, model).turn(ANA, "a red under 20 euros for steak")
    assert result.ok and [c.wine_id for c in result.cards] == ["sm-059"]
    card = result.cards[0]
    # Facts come from the catalog row, not the model.
    assert (card.name, card.price, card.place) == (
        "Catena Malbec",
        "17.00 EUR",
        "Mendoza, Argentina",
    )
    calls = await model_calls(sqlite_app)
    assert [(c.purpose, c.outcome) for c in calls] == [
        ("tool_round", "tool_calls"),
        ("answer", "ok"),
    ]
    assert calls[1].message_id is not None and calls[1].prompt_tokens == 100
    messages = await stored_messages(sqlite_app)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert (
        messages[1].wine_ids == ["sm-059"] and messages[1].reply["wines"][0]["wine_id"] == "sm-059"
    )


async def test_retry_succeeds_after_invalid_json(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([tools(SEARCH_RED), answer("Try the Malbec!"), answer(reply(["sm-059"]))])
    with caplog.at_level(logging.INFO):
        result = await service(sqlite_app, model).turn(ANA, "red for steak")
    assert result.ok
    assert "invalid_json" in feedback_messages(model, 2)[0]
    assert "structured output retry 1/2: invalid_json" in caplog.text
    assert "structured output recovered after 1 retries" in caplog.text
    calls = await model_calls(sqlite_app)
    assert [(c.purpose, c.outcome, c.error_kind) for c in calls] == [
        ("tool_round", "tool_calls", None),
        ("answer", "invalid", "invalid_json"),
        ("repair", "ok", None),
    ]


async def test_refusal_is_not_retried(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [Completion(content=None, refusal="I can't help with that.", finish_reason="stop")]
    )
    result = await service(sqlite_app, model).turn(ANA, "something nasty")
    assert result.status == "refused" and result.text == FRIENDLY["refused"]
    assert len(model.requests) == 1
    assert [c.outcome for c in await model_calls(sqlite_app)] == ["refused"]


async def test_truncated_answer_is_retried_with_a_larger_budget(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(SEARCH_RED),
            answer('{"response_type": "recommendation", "intro": "Here', finish_reason="length"),
            answer(reply(["sm-059"])),
        ]
    )
    result = await service(sqlite_app, model).turn(ANA, "red for steak")
    assert result.ok
    assert model.requests[2]["max_tokens"] == 2 * model.requests[1]["max_tokens"]
    assert "cut off" in feedback_messages(model, 2)[0]


async def test_semantically_empty_answer_is_retried(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    empty = reply([], "informational", intro="none", closing="n/a")
    good = reply([], "informational", intro="Rosé is made with brief skin contact.")
    model = ScriptedModel([answer(empty), answer(good)])
    result = await service(sqlite_app, model).turn(ANA, "how is rosé made?")
    assert result.ok and "skin contact" in result.text
    assert "semantic" in feedback_messages(model, 1)[0]


async def test_ungrounded_wine_id_gets_feedback_not_a_card(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(("search_wines", {"grape": "malbec"})),
            answer(reply(["sm-999"])),
            answer(reply(["sm-058"])),
        ]
    )
    result = await service(sqlite_app, model).turn(ANA, "a malbec")
    assert result.ok and [c.wine_id for c in result.cards] == ["sm-058"]
    feedback = feedback_messages(model, 2)[0]
    assert "grounding" in feedback and "sm-999" in feedback and "sm-058, sm-059" in feedback


async def test_exhaustion_after_exactly_three_calls_stores_no_history(sqlite_app, caplog) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([answer("nope")] * 3)
    with caplog.at_level(logging.INFO):
        result = await service(sqlite_app, model, recovery_compaction=False).turn(ANA, "a red")
    assert result.status == "exhausted" and result.text == FRIENDLY["exhausted"]
    assert len(model.requests) == 3
    assert "structured output exhausted after 3 attempts" in caplog.text
    assert await stored_messages(sqlite_app) == []
    calls = await model_calls(sqlite_app)
    assert [c.outcome for c in calls] == ["invalid"] * 3 and all(
        c.message_id is None for c in calls
    )
    # The admin still sees what the person sent.
    assert [(i.text, i.status) for i in await inbound(sqlite_app)] == [("a red", "exhausted")]


async def test_retry_budget_is_independent_of_tool_rounds(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [tools(SEARCH_RED)] * 5 + [answer("bad"), answer("still bad"), answer(reply(["sm-059"]))]
    )
    result = await service(sqlite_app, model).turn(ANA, "red for steak")
    assert result.ok
    assert model.requests[5]["tools"] is None  # tool rounds spent: the answer must come now
    purposes = [c.purpose for c in await model_calls(sqlite_app)]
    assert purposes == ["tool_round"] * 5 + ["answer", "repair", "repair"]


async def test_malformed_tool_arguments_are_fed_back_and_the_turn_recovers(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(("search_wines", '{"type": "red", "max_price": ')),
            tools(("search_wines", {"type": "purple"})),
            tools(("find_wine", {})),
            tools(("search_wines", {"type": "red", "min_price": "cheap"})),
            tools(SEARCH_RED),
            answer(reply(["sm-059"])),
        ]
    )
    result = await service(sqlite_app, model).turn(ANA, "red")
    assert result.ok
    tool_messages = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert "arguments are not valid JSON" in tool_messages[0]
    assert "unknown type 'purple'" in tool_messages[1]
    assert "unknown tool 'find_wine'" in tool_messages[2]
    assert "min_price" in tool_messages[3] and "valid number" in tool_messages[3]
    assert "Catena Malbec" in tool_messages[4]


async def test_tool_calls_run_concurrently_and_return_in_order(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(("search_wines", {"country": "chile"}), ("get_wine", {"ids": ["sm-001"]})),
            answer(reply(["sm-001", "sm-060"])),
        ]
    )
    result = await service(sqlite_app, model).turn(ANA, "compare")
    assert result.ok
    messages = model.requests[1]["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == ["call_0", "call_1"]
    assert "Casillero" in results[0]["content"] and "Margaux" in results[1]["content"]
    call_message = next(m for m in messages if m.get("tool_calls"))
    assert call_message["content"] == ""  # never null: some servers reject it


async def test_tool_call_written_as_text_is_recognised(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    text_call = '```json\n{"name": "search_wines", "arguments": {"grape": "shiraz"}}\n```'
    model = ScriptedModel([answer(text_call), answer(reply(["sm-052"]))])
    result = await service(sqlite_app, model).turn(ANA, "a shiraz")
    assert result.ok and result.cards[0].name == "Penfolds Bin 28 Kalimna Shiraz"
    assert [c.purpose for c in await model_calls(sqlite_app)] == ["tool_round", "answer"]


async def test_unreachable_model_gives_a_friendly_message(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([ModelUnavailable("connection", "the model server cannot be reached")])
    result = await service(sqlite_app, model).turn(ANA, "hello")
    assert result.status == "error" and "try again" in result.text
    assert await stored_messages(sqlite_app) == []
    calls = await model_calls(sqlite_app)
    assert [(c.outcome, c.error_kind) for c in calls] == [("error", "connection")]


async def test_history_is_sent_and_conversation_continues(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    chat = service(
        sqlite_app,
        ScriptedModel(
            [
                answer(reply([], "clarification", intro="What budget?", closing="")),
                tools(SEARCH_RED),
                answer(reply(["sm-059"])),
            ]
        ),
    )
    first = await chat.turn(ANA, "a red for steak")
    second = await chat.turn(ANA, "under 20")
    assert first.conversation_id == second.conversation_id
    sent = chat.agent.model.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert json.loads(sent[2]["content"])["response_type"] == "clarification"


async def test_new_conversation_after_inactivity(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    chat = service(
        sqlite_app,
        ScriptedModel(
            [
                answer(reply([], "informational", intro="Hello!")),
                answer(reply([], "informational", intro="Hello again!")),
            ]
        ),
    )
    first = await chat.turn(ANA, "hi")
    async with sqlite_app.sessions() as session, session.begin():
        await session.execute(
            update(Conversation).values(last_activity_at=utcnow() - timedelta(hours=13))
        )
    second = await chat.turn(ANA, "hi again")
    assert second.conversation_id != first.conversation_id
    assert len(chat.agent.model.requests[1]["messages"]) == 2  # system + the new message


async def test_long_valid_reply_is_cut_before_storage_not_dropped(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    intro = "First paragraph about wine. " * 10 + "\n\n" + "Second paragraph. " * 200
    model = ScriptedModel([answer(reply([], "informational", intro=intro))])
    result = await service(sqlite_app, model, history_max_chars=500).turn(ANA, "tell me a lot")
    assert result.ok and len(result.text) > 2000  # the person sees it all
    stored = (await stored_messages(sqlite_app))[1]
    assert stored.text == ("First paragraph about wine. " * 10).rstrip()


@pytest.mark.parametrize("iterations", [0, 2])
async def test_tool_rounds_are_bounded(sqlite_app, iterations: int) -> None:  # type: ignore[no-untyped-def]
    final = answer(reply([], "informational", intro="Malbec loves steak."))
    model = ScriptedModel([tools(SEARCH_RED)] * iterations + [final])
    chat = service(sqlite_app, model, agent_max_iterations=iterations)
    result = await chat.turn(ANA, "red")
    assert result.ok and len(model.requests) == iterations + 1
    assert all(r["tools"] for r in model.requests[:iterations])
    assert model.requests[iterations]["tools"] is None
