"""Streaming through the openai SDK against a scripted server that sends server-sent events."""

import json
import time
from dataclasses import replace

import pytest

from sommelier.agent.parsers import Discard, ItemReady, TextDelta
from sommelier.chat.service import FRIENDLY
from tests.support.chat import ANA, model_calls, stored_messages
from tests.support.fake_openai import completion, streamed
from tests.support.scripted import reply

# Words that settle the search: no planning call, the answer is the first request.
STEAK_WORDS = "a red under 20 euros for steak"
META = {
    "response_type": "recommendation",
    "wines": [{"wine_id": "sm-059", "why": "Plush."}],
    "closing": "Cheaper?",
    "guard": None,
}
DELIMITED = "A red for your steak.\nUnder 20 euros.\n---\n" + json.dumps(META)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[float, object]] = []

    def emit(self, event: object) -> None:
        self.events.append((time.monotonic(), event))

    def text(self) -> str:
        return "".join(e.text for _, e in self.events if isinstance(e, TextDelta))


def service(app, fake, protocol="delimited", **settings):  # type: ignore[no-untyped-def]
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "llm_base_url": fake.base_url,
            "output_protocol": protocol,
            "stream_retry_delay": 0.05,
            "agent_strategy": "planner",
            **settings,
        }
    )
    return app.chat_service()


async def test_live_text_arrives_before_the_stream_ends(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(streamed(DELIMITED, chunk=4, chunk_delay=0.02))
    sink = Recorder()
    result = await service(sqlite_app, fake_openai).turn(ANA, STEAK_WORDS, sink=sink)
    assert result.ok and result.cards[0].wine_id == "sm-059"
    first_text_at = next(t for t, e in sink.events if isinstance(e, TextDelta))
    assert first_text_at < fake_openai.stream_ends[-1]  # shown while the model was writing
    assert sink.text() == "A red for your steak.\nUnder 20 euros.\n"  # never the ---
    assert fake_openai.requests[0]["stream"] is True
    assert "response_format" not in fake_openai.requests[0]  # delimited is plain text


async def test_native_tool_rounds_stream_too_and_a_tool_call_shows_nothing(
    sqlite_app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    fenced = '```json\n{"name": "search_wines", "arguments": {"grape": "malbec"}}\n```'
    fake_openai.add(streamed(fenced), streamed(DELIMITED, chunk=4))
    sink = Recorder()
    chat = service(sqlite_app, fake_openai, agent_strategy="native")
    result = await chat.turn(ANA, "a malbec", sink=sink)
    assert result.ok and result.cards[0].wine_id == "sm-059"
    assert sink.text() == "A red for your steak.\nUnder 20 euros.\n"  # not the fence
    assert all(r["stream"] is True and r["tools"] for r in fake_openai.requests)
    assert [c.purpose for c in await model_calls(sqlite_app)] == ["tool_round", "answer"]


async def test_ndjson_items_are_handed_over_before_the_end(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    lines = "".join(
        json.dumps(i) + "\n"
        for i in [
            {"type": "intro", "text": "One red:"},
            {"type": "wine", "wine_id": "sm-059", "why": "Plush."},
            {"type": "closing", "text": "More?"},
            {"type": "meta", "response_type": "recommendation", "guard": None},
        ]
    )
    fake_openai.add(streamed(lines, chunk=6, chunk_delay=0.02))
    sink = Recorder()
    result = await service(sqlite_app, fake_openai, "ndjson").turn(ANA, STEAK_WORDS, sink=sink)
    assert result.ok
    wine_at = next(t for t, e in sink.events if isinstance(e, ItemReady) and e.kind == "wine")
    assert wine_at < fake_openai.stream_ends[-1]


async def test_repair_after_a_bad_stream(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        streamed("I think the Malbec would be great, no delimiter here."),
        streamed(DELIMITED),
    )
    sink = Recorder()
    result = await service(sqlite_app, fake_openai).turn(ANA, STEAK_WORDS, sink=sink)
    assert result.ok
    kinds = [type(e).__name__ for _, e in sink.events]
    discard = kinds.index("Discard")
    assert "TextDelta" in kinds[:discard] and "TextDelta" in kinds[discard:]
    assert [e.reason for _, e in sink.events if isinstance(e, Discard)] == ["repair"]
    feedback = fake_openai.requests[1]["messages"][-1]["content"]
    assert "missing_delimiter" in feedback
    assert [c.outcome for c in await model_calls(sqlite_app)] == ["invalid", "ok"]


async def test_disconnect_mid_stream_is_retried_and_continued(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    full = DELIMITED
    cut = 3 * 8  # three 8-character chunks arrive, then the connection drops
    fake_openai.add(
        streamed(full, chunk=8, drop_after=3),
        streamed(full[cut:], chunk=8),
    )
    sink = Recorder()
    result = await service(sqlite_app, fake_openai).turn(ANA, STEAK_WORDS, sink=sink)
    assert result.ok and result.cards[0].wine_id == "sm-059"
    retry = fake_openai.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": full[:cut]}
    assert retry[-1]["content"].startswith("Your answer was cut off by a network error")
    assert sink.text() == "A red for your steak.\nUnder 20 euros.\n"  # nothing twice
    calls = await model_calls(sqlite_app)
    assert [(c.outcome, c.error_kind) for c in calls] == [
        ("error", "stream_broken"),
        ("ok", None),
    ]


async def test_stream_that_breaks_twice_keeps_what_was_shown(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.add(
        streamed(DELIMITED, chunk=8, drop_after=2),
        streamed(DELIMITED[16:], chunk=8, drop_after=1),
    )
    sink = Recorder()
    result = await service(sqlite_app, fake_openai).turn(ANA, STEAK_WORDS, sink=sink)
    assert result.status == "interrupted" and result.text == FRIENDLY["interrupted"]
    assert sink.text().startswith("A red for your")  # the person keeps what they saw
    assert not any(isinstance(e, Discard) for _, e in sink.events)
    assert await stored_messages(sqlite_app) == []


@pytest.mark.parametrize("protocol", ["json", "delimited", "ndjson"])
async def test_every_protocol_works_without_streaming(sqlite_app, fake_openai, protocol) -> None:  # type: ignore[no-untyped-def]
    answers = {
        "json": reply(["sm-059"]),
        "delimited": DELIMITED,
        "ndjson": "".join(
            json.dumps(i) + "\n"
            for i in [
                {"type": "intro", "text": "One red:"},
                {"type": "wine", "wine_id": "sm-059", "why": "Plush."},
                {"type": "meta", "response_type": "recommendation", "guard": None},
            ]
        ),
    }
    fake_openai.add(completion(answers[protocol]))
    result = await service(sqlite_app, fake_openai, protocol).turn(ANA, STEAK_WORDS)
    assert result.ok and result.cards[0].wine_id == "sm-059"
    system = fake_openai.requests[0]["messages"][0]["content"]
    assert {
        "json": "reply with one JSON object",
        "delimited": "then a line with only ---",
        "ndjson": "one JSON object per line",
    }[protocol] in system


async def test_a_server_that_reports_no_usage_gets_counted_and_marked_estimated(
    sqlite_app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    """llama-cpp-python's server streams no usage: prompt size and output tokens are counted
    with the context's counter, stored, and marked estimated; a server's own counts are kept."""
    fake_openai.add(streamed(DELIMITED, usage=False), streamed(DELIMITED))
    chat = service(sqlite_app, fake_openai)
    assert (await chat.turn(ANA, STEAK_WORDS, sink=Recorder())).ok
    assert (await chat.turn(replace(ANA, local_name="bo"), STEAK_WORDS, sink=Recorder())).ok
    counted, reported = await model_calls(sqlite_app)
    prompt_chars = sum(len(m["content"] or "") for m in fake_openai.requests[0]["messages"])
    assert counted.usage_estimated and prompt_chars / 6 < counted.prompt_tokens < prompt_chars
    assert 0 < counted.completion_tokens < len(DELIMITED)
    assert not reported.usage_estimated
    assert (reported.prompt_tokens, reported.completion_tokens) == (120, 30)


async def test_a_streamed_answers_cached_tokens_come_from_its_last_chunk(
    sqlite_app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    """llama.cpp's server puts `timings` (cache_n) on the last chunk of a stream."""
    fake_openai.add(streamed(DELIMITED, chunk=8, timings={"cache_n": 96, "prompt_n": 24}))
    result = await service(sqlite_app, fake_openai).turn(ANA, STEAK_WORDS, sink=Recorder())
    assert result.ok
    (call,) = await model_calls(sqlite_app)
    assert (call.prompt_tokens, call.cached_tokens) == (120, 96)
