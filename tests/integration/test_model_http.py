"""Turns through the real openai SDK over HTTP against a scripted OpenAI-compatible server."""

import socket

import pytest

from sommelier.chat.service import FRIENDLY
from tests.support.chat import ANA, model_calls, stored_messages
from tests.support.fake_openai import Reply, completion, error
from tests.support.scripted import reply

STEAK = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})


def chat(app, fake, **settings):  # type: ignore[no-untyped-def]
    app.settings = app.settings.model_copy(
        update={"llm_base_url": fake.base_url, "llm_model": "fake-model", **settings}
    )
    return app.chat_service()


async def test_tool_call_then_grounded_answer(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(completion(tool_calls=[STEAK]), completion(reply(["sm-059"])))
    result = await chat(app, fake_openai).turn(ANA, "a red under 20 euros for steak")
    assert result.ok and result.cards[0].name == "Catena Malbec"
    first, second = fake_openai.requests
    assert {t["function"]["name"] for t in first["tools"]} == {"search_wines", "get_wine"}
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["strict"] is True
    # The assistant tool-call message goes back with content "" (never null).
    assert second["messages"][-2]["content"] == "" and second["messages"][-2]["tool_calls"]
    assert "Catena Malbec" in second["messages"][-1]["content"]
    calls = await model_calls(app)
    assert [(c.purpose, c.prompt_tokens, c.completion_tokens, c.finish_reason) for c in calls] == [
        ("tool_round", 120, 30, "tool_calls"),
        ("answer", 120, 30, "stop"),
    ]
    assert all(c.latency_ms >= 0 and c.model == "fake-model" for c in calls)


async def test_429_with_retry_after_is_waited_out_by_the_sdk(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        error(429, "slow down", {"retry-after": "1"}),
        completion(reply([], "informational", intro="Malbec is from Argentina.")),
    )
    result = await chat(app, fake_openai).turn(ANA, "where is malbec from?")
    assert result.ok
    assert len(fake_openai.requests) == 2
    # A network retry is not a repair: one model_calls row, outcome ok.
    assert [(c.attempt, c.outcome) for c in await model_calls(app)] == [(1, "ok")]


async def test_500_is_retried(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(error(500), completion(reply([], "informational", intro="Hi there!")))
    result = await chat(app, fake_openai).turn(ANA, "hi")
    assert result.ok and len(fake_openai.requests) == 2


async def test_persistent_500_gives_friendly_error_and_no_history(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = error(503, "overloaded")
    result = await chat(app, fake_openai, llm_network_retries=1).turn(ANA, "hi")
    assert result.status == "error" and result.text == FRIENDLY["error"]
    assert len(fake_openai.requests) == 2
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


def rejects_json_schema(body):  # type: ignore[no-untyped-def]
    if body.get("response_format", {}).get("type") == "json_schema":
        return error(400, "response_format type json_schema is not supported")
    return completion(reply([], "informational", intro="Rioja is Tempranillo country."))


def rejects_any_schema(body):  # type: ignore[no-untyped-def]
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema" or "schema" in response_format:
        return error(400, "invalid response_format: schema not supported")
    return completion(reply([], "informational", intro="Rioja is Tempranillo country."))


@pytest.mark.parametrize(
    ("behaviour", "accepted"),
    [
        (rejects_json_schema, {"type": "json_object", "schema": True}),
        (rejects_any_schema, {"type": "json_object", "schema": False}),
    ],
)
async def test_response_format_falls_back_for_servers_without_json_schema(
    app, fake_openai, behaviour, accepted
) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = behaviour
    service = chat(app, fake_openai)
    assert (await service.turn(ANA, "what is rioja?")).ok
    last = fake_openai.requests[-1]["response_format"]
    assert last["type"] == accepted["type"] and ("schema" in last) == accepted["schema"]
    # The working mode is remembered: the next turn goes straight to it.
    before = len(fake_openai.requests)
    assert (await service.turn(ANA, "and rioja again?")).ok
    assert len(fake_openai.requests) == before + 1


async def test_tool_call_in_content_from_a_small_model(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion('```json\n{"name": "search_wines", "arguments": {"grape": "shiraz"}}\n```'),
        completion(reply(["sm-052"])),
    )
    result = await chat(app, fake_openai).turn(ANA, "a shiraz please")
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
    assert (await chat(app, fake_openai).turn(ANA, "steak wine")).ok


async def test_invalid_json_is_repaired_over_http(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        completion(tool_calls=[STEAK]),
        completion("Definitely the Malbec."),
        completion(reply(["sm-059"])),
    )
    result = await chat(app, fake_openai).turn(ANA, "steak wine")
    assert result.ok
    assert fake_openai.requests[2]["messages"][-1]["content"].startswith("Your previous answer")
    assert [c.outcome for c in await model_calls(app)] == ["tool_calls", "invalid", "ok"]
