"""Real turns (scripted model) traced by the Langfuse SDK into an in-memory exporter."""

import json
from functools import partial

import pytest

from sommelier.agent.model import Completion, Usage
from sommelier.chat.service import Origin
from sommelier.db.repositories import Person
from sommelier.observability.langfuse_tracer import tracer_from_environment
from sommelier.observability.tracing import NoTracer
from tests.support.chat import ANA
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.tracing import attr, capture, trace_metadata

BEN = Person(channel="cli", local_name="ben", display_name="Ben")

SEARCH = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})


@pytest.fixture(autouse=True)
def _native(sqlite_app):  # type: ignore[no-untyped-def]
    """Most of these turns script the model's own tool calls."""
    settings = sqlite_app.settings
    sqlite_app.settings = settings.model_validate(
        {**settings.model_dump(), "agent_strategy": "native"}
    )


async def test_clean_turn(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture()
    model = ScriptedModel([tools(SEARCH), answer(reply(["sm-059"]))])
    result = await sqlite_app.chat_service(model, captured.tracer).turn(
        ANA, "a red under 20 for steak"
    )
    assert result.ok
    root = captured.root()
    assert attr(root, "langfuse.trace.name") == "sommelier.turn"
    assert root.attributes["session.id"] == str(result.conversation_id)
    # An operator finds the person by channel and name (or Telegram id), not a row id.
    assert attr(root, "user.id") == "cli:ana"
    assert set(attr(root, "langfuse.trace.tags")) == {"sommelier", "cli"}
    assert trace_metadata(root)["user_name"] == "Ana"
    expected = {
        "channel": "cli",
        "tool_rounds": 1,
        "structured_output_retries": 0,
        "structured_output_errors": [],
        "response_type": "recommendation",
        "outcome": "ok",
    }
    assert trace_metadata(root).items() >= expected.items()
    generations = captured.of_type("generation")
    assert len(generations) == 2
    first = sorted(generations, key=lambda s: s.start_time)[0]
    assert attr(first, "langfuse.observation.model.name") == "scripted"
    assert attr(first, "langfuse.observation.usage_details") == {"input": 100, "output": 10}
    assert attr(first, "langfuse.observation.metadata.attempt") == 1
    assert attr(first, "langfuse.observation.metadata.usage_estimated") is False  # reported
    assert attr(first, "langfuse.observation.metadata.finish_reason") == "tool_calls"
    assert attr(first, "langfuse.observation.input")[0]["role"] == "system"
    (tool,) = captured.of_type("tool")
    assert tool.name == "search_wines"
    assert attr(tool, "langfuse.observation.input") == SEARCH[1]
    assert "Catena Malbec" in attr(tool, "langfuse.observation.output")
    assert all(s.parent.span_id == root.context.span_id for s in [*generations, tool])


async def test_two_retries_and_their_errors_in_metadata(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture()
    model = ScriptedModel(
        [answer("not json"), answer(reply(["sm-999"])), answer(reply(["sm-059"]))]
    )
    settings = sqlite_app.settings
    sqlite_app.settings = settings.model_validate(
        {**settings.model_dump(), "agent_strategy": "planner"}
    )
    chat = sqlite_app.chat_service(model, captured.tracer)
    assert (await chat.turn(ANA, "a malbec")).ok
    assert trace_metadata(captured.root())["strategy"] == "planner"
    meta = trace_metadata(captured.root())
    assert meta["structured_output_retries"] == 2 and meta["outcome"] == "ok"
    errors = meta["structured_output_errors"]
    assert len(errors) == 2 and errors[0].startswith("invalid_json")
    assert errors[1].startswith("grounding") and "sm-999" in errors[1]
    failed = [
        g
        for g in captured.of_type("generation")
        if attr(g, "langfuse.observation.metadata.outcome") == "invalid"
    ]
    assert len(failed) == 2 and all(
        attr(g, "langfuse.observation.level") == "WARNING" for g in failed
    )


async def test_exhausted_turn(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture()
    sqlite_app.settings = sqlite_app.settings.model_copy(update={"recovery_compaction": False})
    model = ScriptedModel([answer("bad")] * 4)
    result = await sqlite_app.chat_service(model, captured.tracer).turn(ANA, "hello")
    assert result.status == "exhausted"
    meta = trace_metadata(captured.root())
    assert meta["outcome"] == "exhausted" and len(meta["structured_output_errors"]) == 3
    # A tool round in which the model wrote text, then three answer attempts.
    assert meta["response_type"] is None and len(captured.of_type("generation")) == 4


async def test_reset_turn_outcome(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture()
    model = ScriptedModel([answer("bad")] * 5)
    await sqlite_app.chat_service(model, captured.tracer).turn(ANA, "hello")
    meta = trace_metadata(captured.root())
    assert meta["outcome"] == "reset" and meta["recovery_level"] == 3


async def test_tool_error_is_visible(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture()
    model = ScriptedModel(
        [
            tools(("get_wine", {"ids": []})),
            answer(reply([], "clarification", intro="Which wine?")),
        ]
    )
    assert (await sqlite_app.chat_service(model, captured.tracer).turn(ANA, "purple")).ok
    (tool,) = captured.of_type("tool")
    assert attr(tool, "langfuse.observation.level") == "WARNING"
    assert "ids" in attr(tool, "langfuse.observation.status_message")
    assert attr(tool, "langfuse.observation.metadata.ok") is False


async def test_masking_keeps_lengths_and_hides_text(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    captured = capture(mask=True)
    model = ScriptedModel([answer(reply([], "informational", intro="Barolo is Nebbiolo."))])
    secret = "my neighbour Jane Doe says hello"
    assert (await sqlite_app.chat_service(model, captured.tracer).turn(ANA, secret)).ok
    dumped = json.dumps([dict(s.attributes) for s in captured.spans()])
    assert "Jane" not in dumped and "Nebbiolo" not in dumped
    root_input = attr(captured.root(), "langfuse.observation.input")
    assert root_input == {"text": "xx xxxxxxxxx xxxx xxx xxxx xxxxx"}
    assert len(root_input["text"]) == len(secret)
    # Structure stays readable: roles, outcome and counts are not masked.
    generation = captured.of_type("generation")[0]
    roles = [m["role"] for m in attr(generation, "langfuse.observation.input")]
    assert roles == ["system", "system", "user"]  # the prompt, the turn's note, the message
    assert trace_metadata(captured.root())["outcome"] == "ok"
    assert "user_name" not in trace_metadata(captured.root())  # a name is masked text too


def test_tracing_is_off_without_keys(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    assert isinstance(tracer_from_environment(), NoTracer)
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-x")
    assert isinstance(tracer_from_environment(), NoTracer)  # both keys are needed


async def test_tracing_off_changes_nothing(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([tools(SEARCH), answer(reply(["sm-059"]))])
    service = sqlite_app.chat_service(model)
    assert isinstance(service.tracer, NoTracer)
    assert (await service.turn(ANA, "a red under 20 for steak")).ok


async def test_a_thumbs_down_is_a_score_on_the_turns_trace(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from tests.support.tracing import Ingestion

    ingestion = Ingestion()
    try:
        captured = capture(base_url=ingestion.base_url)
        model = ScriptedModel([tools(SEARCH), answer(reply(["sm-059"]))])
        service = sqlite_app.chat_service(model, captured.tracer)
        group = Origin(key=1, thread=-100700, shared=True)
        result = await service.turn(ANA, "a red under 20 for steak", origin=group)
        trace_id = format(captured.root().context.trace_id, "032x")
        rate = partial(service.preferences.rate, message_id=result.message_id, card=1)
        await rate(ANA, 1, chat_id=-100700)
        await rate(ANA, -1, chat_id=-100700, reason="corked")
        await rate(BEN, 1, chat_id=-100700)  # another member of the group
        outsider = await rate(BEN, 1)  # the same reply, pressed outside that chat
        captured.tracer.flush()
        scores = ingestion.scores()
    finally:
        ingestion.stop()
    # Ana's two presses name the same score id (Langfuse keeps the second); Ben's is his own.
    assert [(s["traceId"], s["name"], s["value"]) for s in scores] == [
        (trace_id, "card_feedback", 1.0),
        (trace_id, "card_feedback", -1.0),
        (trace_id, "card_feedback", 1.0),
    ]
    assert scores[0]["id"] == scores[1]["id"] != scores[2]["id"]
    assert scores[1]["comment"] == "sm-059 corked" and not outsider.ok


async def test_cached_prompt_tokens_are_the_generations_cache_read_usage(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """Langfuse counts a generation's cached prompt tokens as `cache_read_input_tokens`."""
    captured = capture()
    cached = Completion(
        content=json.dumps(reply(["sm-059"])),
        finish_reason="stop",
        usage=Usage(prompt_tokens=500, completion_tokens=40, cached_tokens=380),
        model="scripted",
    )
    model = ScriptedModel([tools(SEARCH), cached])
    result = await sqlite_app.chat_service(model, captured.tracer).turn(
        ANA, "a red under 20 for steak"
    )
    assert result.ok
    last = sorted(captured.of_type("generation"), key=lambda s: s.start_time)[-1]
    assert attr(last, "langfuse.observation.usage_details") == {
        "input": 500,
        "output": 40,
        "cache_read_input_tokens": 380,
    }


async def test_the_rules_that_shaped_a_search_are_on_its_tool_span(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """An operator sees why the search differs from what the model wrote: its guessed dessert
    for a beef stew was left out (search_unnamed_for_dish), and so was its food beside the dish
    the table read."""
    captured = capture()
    guessed = ("search_wines", {"type": "dessert", "food": "dessert"})
    model = ScriptedModel([tools(guessed), answer(reply(["sm-023"]))])
    await sqlite_app.chat_service(model, captured.tracer).turn(ANA, "A wine for hachee tonight")
    (tool,) = captured.of_type("tool")
    rules = attr(tool, "langfuse.observation.metadata.rules")
    assert set(rules) == {"dish_read", "plan_text_left_out", "search_unnamed_for_dish"}
