"""Turns through the real openai SDK over HTTP against a scripted OpenAI-compatible server that
behaves like the servers people run (llama-cpp-python, llama-server, Ollama, hosted APIs)."""

import socket

import pytest
from sqlalchemy import text

from sommelier.chat.service import FRIENDLY
from tests.support.chat import ANA, model_calls, stored_messages
from tests.support.fake_openai import Reply, completion, error
from tests.support.scripted import plan_text, reply

STEAK = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})
PLAN_NO_TOOL = completion(plan_text("answer"))
STEAK_WORDS = "a red under 20 euros for steak"


def chat(app, fake, **settings):  # type: ignore[no-untyped-def]
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "llm_base_url": fake.base_url,
            "llm_model": "fake-model",
            "agent_strategy": "planner",
            **settings,
        }
    )
    return app.chat_service()


async def test_planner_over_http(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion(plan_text(arguments={"query": "malbec"})), completion(reply(["sm-059"]))
    )
    result = await chat(app, fake_openai).turn(ANA, "Recommend a bottle for tonight")
    assert result.ok and result.cards[0].name == "Catena Malbec"
    planning, answering = fake_openai.requests
    # Neither call offers tools: the server enforces each call's format.
    assert "tools" not in planning and "tools" not in answering
    assert planning["response_format"]["type"] == "json_schema"
    assert planning["response_format"]["json_schema"]["schema"]["properties"]["action"]
    answer_schema = answering["response_format"]["json_schema"]["schema"]
    shapes = answer_schema["properties"]["wines"]["items"]["anyOf"]  # one per wine found
    assert "sm-059" in [s["properties"]["wine_id"]["enum"][0] for s in shapes]
    # The runtime's search goes back as an assistant tool call with content "" (never null).
    call = next(m for m in answering["messages"] if m.get("tool_calls"))
    assert call["content"] == "" and "Catena Malbec" in answering["messages"][-2]["content"]
    calls = await model_calls(app)
    assert [(c.purpose, c.prompt_tokens, c.completion_tokens, c.finish_reason) for c in calls] == [
        ("plan", 120, 30, "stop"),
        ("answer", 120, 30, "stop"),
    ]
    assert all(c.latency_ms >= 0 and c.model == "fake-model" for c in calls)


async def test_native_over_http_sends_tools_without_a_response_format(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(completion(tool_calls=[STEAK]), completion(reply(["sm-059"])))
    result = await chat(app, fake_openai, agent_strategy="native").turn(ANA, STEAK_WORDS)
    assert result.ok and result.cards[0].wine_id == "sm-059"
    first, second = fake_openai.requests
    assert {t["function"]["name"] for t in first["tools"]} == {
        "search_wines",
        "get_wine",
        "wine_knowledge",
    }
    assert "response_format" not in first and "response_format" not in second
    assert second["messages"][-2]["content"] == "" and second["messages"][-2]["tool_calls"]


async def test_429_with_retry_after_is_waited_out_by_the_sdk(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    informational = completion(reply([], "informational", intro="Malbec is from Argentina."))
    fake_openai.add(error(429, "slow down", {"retry-after": "1"}), informational)
    result = await chat(app, fake_openai).turn(ANA, "hello")
    assert result.ok
    assert len(fake_openai.requests) == 2
    # A network retry is not a repair: one model_calls row for the call, and it is fine.
    assert [(c.attempt, c.outcome) for c in await model_calls(app)] == [(1, "ok")]


async def test_500_is_retried(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    hello = completion(reply([], "informational", intro="Hi there!"))
    fake_openai.add(error(500), hello)
    result = await chat(app, fake_openai).turn(ANA, "hi")
    assert result.ok and len(fake_openai.requests) == 2


async def test_persistent_500_gives_friendly_error_and_no_history(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = error(503, "overloaded")
    result = await chat(app, fake_openai, llm_network_retries=1).turn(ANA, "hi")
    assert result.status == "error" and result.text == FRIENDLY["error"]
    assert len(fake_openai.requests) == 2  # the first try and one network retry
    assert await stored_messages(app) == []
    assert [(c.outcome, c.error_kind) for c in await model_calls(app)] == [
        ("error", "server_error")
    ]


async def test_read_timeout(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(Reply(delay=1.5, body={}))
    service = chat(app, fake_openai, llm_read_timeout=0.3, llm_network_retries=0)
    result = await service.turn(ANA, "hi")
    assert result.status == "error" and "try again" in result.text
    assert [(c.outcome, c.error_kind) for c in await model_calls(app)] == [("error", "timeout")]


async def test_connection_refused(app) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app.settings = app.settings.model_copy(
        update={"llm_base_url": f"http://127.0.0.1:{port}/v1", "llm_network_retries": 0}
    )
    result = await app.chat_service().turn(ANA, "hi")
    assert result.status == "error" and result.text == FRIENDLY["error"]
    assert [(c.outcome, c.error_kind) for c in await model_calls(app)] == [("error", "connection")]


async def test_a_200_that_is_not_a_chat_completion_is_unavailable(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = Reply(body={"unexpected": "shape"})
    result = await chat(app, fake_openai).turn(ANA, "hi")
    assert result.status == "error" and result.text == FRIENDLY["error"]
    # Asked once more (a garbage 200 may be a hiccup), then the friendly line.
    assert [c.error_kind for c in await model_calls(app)] == ["bad_response"] * 2


def rioja(body):  # type: ignore[no-untyped-def]
    """A fresh informational answer each time (a repeated reply is not an answer)."""
    turn = sum(m["role"] == "user" for m in body["messages"])
    return completion(reply([], "informational", intro=f"Rioja is Tempranillo country ({turn})."))


def llama_cpp_python(body):  # type: ignore[no-untyped-def]
    """llama-cpp-python 0.3: a 500 with its pydantic error for `json_schema`; json_object with a
    schema works."""
    if body.get("response_format", {}).get("type") == "json_schema":
        return error(500, "1 validation error: body.response_format.type: Input should be "
                     "'text' or 'json_object'")  # fmt: skip
    if "action" in str(body.get("response_format", {}).get("schema", {})):
        return PLAN_NO_TOOL
    return rioja(body)


def rejects_any_schema(body):  # type: ignore[no-untyped-def]
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema" or "schema" in response_format:
        return error(400, "invalid response_format: schema not supported")
    return rioja(body)


@pytest.mark.parametrize(
    ("behaviour", "accepted"),
    [
        (llama_cpp_python, {"type": "json_object", "schema": True}),
        (rejects_any_schema, {"type": "json_object", "schema": False}),
    ],
)
async def test_response_format_falls_back_at_the_first_rejection(
    app, fake_openai, behaviour, accepted
) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = behaviour
    service = chat(app, fake_openai)
    assert (await service.turn(ANA, "what is rioja?")).ok
    # Each rejection is recognised on its first answer: no network retries spent on it.
    rejected = [r for r in fake_openai.requests if "schema" in str(r.get("response_format"))]
    formats = [r["response_format"]["type"] for r in fake_openai.requests]
    assert formats.count("json_schema") == 1
    last = fake_openai.requests[-1]["response_format"]
    assert last["type"] == accepted["type"] and ("schema" in last) == accepted["schema"]
    assert rejected
    # The working mode is remembered: the next turn goes straight to it.
    before = len(fake_openai.requests)
    assert (await service.turn(ANA, "and rioja again?")).ok
    new = fake_openai.requests[before:]
    assert new and all(r["response_format"]["type"] == accepted["type"] for r in new)


async def test_tool_call_in_content_from_a_small_model(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion('```json\n{"name": "search_wines", "arguments": {"grape": "shiraz"}}\n```'),
        completion(reply(["sm-052"])),
    )
    result = await chat(app, fake_openai, agent_strategy="native").turn(ANA, "a shiraz please")
    assert result.ok and result.cards[0].wine_id == "sm-052"
    tool_message = fake_openai.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "Kalimna" in tool_message["content"]


async def test_server_that_rejects_null_content_is_never_sent_null(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    def strict(body):  # type: ignore[no-untyped-def]
        if any(m["role"] == "assistant" and m.get("content") is None for m in body["messages"]):
            return error(400, "assistant content must be a string")
        if len(fake_openai.requests) == 1:
            return completion(tool_calls=[STEAK])
        return completion(reply(["sm-059"]))

    fake_openai.default = strict
    assert (await chat(app, fake_openai, agent_strategy="native").turn(ANA, STEAK_WORDS)).ok


async def test_invalid_json_is_repaired_over_http(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(completion("Definitely the Malbec."), completion(reply(["sm-059"])))
    result = await chat(app, fake_openai).turn(ANA, STEAK_WORDS)
    assert result.ok
    assert fake_openai.requests[1]["messages"][-1]["content"].startswith("Your previous answer")
    assert [c.outcome for c in await model_calls(app)] == ["invalid", "ok"]


async def test_cached_prompt_tokens_are_read_from_either_servers_report_and_summed(
    app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    """llama.cpp says how much of a prompt came from its cache in `timings.cache_n`; OpenAI and
    vLLM in `usage.prompt_tokens_details.cached_tokens`. Each call keeps it, and the admin view
    gives the day's cached share (of the calls whose server said)."""
    fake_openai.add(
        completion(
            plan_text(arguments={"query": "malbec"}),
            prompt_tokens=400,
            extra={"timings": {"cache_n": 300, "prompt_n": 100}},
        ),
        completion(
            reply(["sm-059"]),
            prompt_tokens=500,
            extra={"usage": {"prompt_tokens_details": {"cached_tokens": 420}}},
        ),
        completion(plan_text(arguments={"query": "malbec"}), prompt_tokens=100),  # says nothing
        completion(reply(["sm-059"]), prompt_tokens=100),
    )
    service = chat(app, fake_openai)
    await service.turn(ANA, "Recommend a bottle for tonight")
    await service.turn(ANA, "Recommend a bottle for the weekend")
    calls = await model_calls(app)
    assert [(c.prompt_tokens, c.cached_tokens) for c in calls] == [
        (400, 300),
        (500, 420),
        (100, None),
        (100, None),
    ]
    async with app.sessions() as session:
        day = (await session.execute(text("SELECT * FROM admin_prompt_cache_daily"))).one()
    assert (day.calls, day.prompt_tokens, day.cached_tokens) == (4, 1100, 720)
    assert float(day.cached_percent) == 80.0  # 720 of the 900 reported on
