"""A 60-turn conversation with a small context window, checked on every request by the server."""

import json
import math

from sommelier.agent.context import MARKER
from tests.support.chat import ANA
from tests.support.fake_openai import completion, error
from tests.support.scripted import reply

WINDOW = 4096
MAX_OUTPUT = 512


def server_tokens(text: str) -> int:
    """The server's own tokenizer: 4 characters a token."""
    return math.ceil(len(text) / 4)


async def test_sixty_turns_never_overflow_and_keep_persona_and_first_request(
    sqlite_app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    problems: list[str] = []
    prompt_sizes: list[int] = []

    def check(body):  # type: ignore[no-untyped-def]
        messages = body["messages"]
        message_tokens = sum(server_tokens(m.get("content") or "") + 4 for m in messages)
        fixed = server_tokens(json.dumps(body.get("tools") or [])) + server_tokens(
            json.dumps(body.get("response_format") or {})
        )
        total = message_tokens + fixed + body.get("max_tokens", 0)
        prompt_sizes.append(message_tokens + fixed)
        turn = len(prompt_sizes)
        if total > WINDOW:
            problems.append(f"request {turn}: {total} tokens > {WINDOW}")
        if not messages[0]["content"].startswith("You are Sommelier"):
            problems.append(f"request {turn}: system prompt missing")
        if not any("FIRST: a Rioja for my dinner" in (m.get("content") or "") for m in messages):
            problems.append(f"request {turn}: first user message missing")
        if sum(m.get("content") == MARKER for m in messages) > 1:
            problems.append(f"request {turn}: more than one marker")
        if len(messages) < 2:
            return error(400, "no messages")
        intro = f"Answer {turn}. " + "Tempranillo is lovely with lamb. " * 8
        return completion(reply([], "informational", intro=intro), prompt_tokens=message_tokens)

    fake_openai.default = check
    sqlite_app.settings = sqlite_app.settings.model_copy(
        update={
            "llm_base_url": fake_openai.base_url,
            "llm_context_tokens": WINDOW,
            "llm_max_output_tokens": MAX_OUTPUT,
            "history_max_messages": 200,
        }
    )
    chat = sqlite_app.chat_service()
    for turn in range(60):
        text = (
            "FIRST: a Rioja for my dinner" if turn == 0 else f"Turn {turn}: " + "tell me more " * 10
        )
        result = await chat.turn(ANA, text)
        assert result.ok, result.text
    assert problems == []
    # The history outgrew the window, so turns were omitted; the prompt stayed bounded (each
    # call's prompt and its own output budget within the window, checked above).
    last = fake_openai.requests[-1]["messages"]
    assert any(m.get("content") == MARKER for m in last)
    assert max(prompt_sizes) < WINDOW
