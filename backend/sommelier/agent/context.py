"""Fitting a conversation into the model's context window.

`fit_messages` is a pure function of (messages, budget, counter). What always stays: every
system message (grouped at the front), the first user message and the latest message (with its
tool-call group). When older turns must go, one marker stands right after the first user
message, and the rest of the budget holds the most recent turns that fit. An assistant tool call
and its results are kept or dropped together. If even the pinned messages do not fit, the
longest pinned user text is shortened with a visible "…".

Token counting is exact when a tokenizer is available (tiktoken, if installed with its
encodings cached) and otherwise a conservative estimate calibrated against the prompt_tokens
the server reports.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Protocol

from sommelier.agent.messages import Message, text_of

MARKER = "[Earlier turns omitted to fit the context window.]"
ELLIPSIS = "…"
MESSAGE_OVERHEAD = 4  # role and separators, per message, in every chat template we know
MIN_LATEST_CHARS = 200  # the person's latest message is never shortened below this


class TokenCounter(Protocol):
    def count(self, messages: Sequence[Message]) -> int: ...


def is_marker(message: Message) -> bool:
    return message.get("role") != "system" and text_of(message) == MARKER


def _marker() -> Message:
    # An assistant message keeps user/assistant alternation for strict chat templates.
    return {"role": "assistant", "content": MARKER}


def _groups(messages: list[Message]) -> list[list[Message]]:
    """Split into units that must stay whole: an assistant tool call with its results."""
    groups: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "tool":
            if groups and groups[-1][0].get("tool_calls"):
                groups[-1].append(message)
            # A tool result whose call is not here is an orphan: it is dropped.
            continue
        groups.append([message])
    return groups


def fit_messages(messages: Sequence[Message], budget: int, counter: TokenCounter) -> list[Message]:
    systems = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    if counter.count(systems + rest) <= budget and sum(map(is_marker, rest)) <= 1:
        return systems + rest
    rest = [m for m in rest if not is_marker(m)]
    first_user = next((i for i, m in enumerate(rest) if m.get("role") == "user"), None)
    if first_user is None:
        groups, head = _groups(rest), []
    else:
        groups, head = _groups(rest[first_user + 1 :]), [rest[first_user]]
    if not groups:  # only the first user message (or nothing) besides the system messages
        return _shorten_to_fit(systems, head, [], budget, counter)
    latest = groups.pop()
    if counter.count(systems + head + [m for g in groups for m in g] + latest) <= budget:
        return systems + head + [m for g in groups for m in g] + latest
    room = budget - counter.count(systems + head + [_marker()] + latest)
    kept: list[list[Message]] = []
    for group in reversed(groups):
        size = counter.count(group)
        if size > room:
            break
        kept.insert(0, group)
        room -= size
    # Start the kept turns at a user message where possible, so roles keep alternating.
    while kept and kept[0][0].get("role") != "user":
        kept.pop(0)
    middle = [m for g in kept for m in g]
    if room < 0:
        return _shorten_to_fit(systems, head, [_marker(), *latest], budget, counter)
    return systems + head + [_marker()] + middle + latest


def _shorten_to_fit(
    systems: list[Message],
    head: list[Message],
    tail: list[Message],
    budget: int,
    counter: TokenCounter,
) -> list[Message]:
    """The pinned messages alone are too big: shorten the longest pinned user texts, longest
    first, each with a visible "…", until the prompt fits. The latest message keeps at least
    its first MIN_LATEST_CHARS characters: a turn about "…" helps nobody (the agent's start-up
    check leaves room for that much)."""
    pinned = [dict(m) for m in head + tail]
    users = [m for m in pinned if m.get("role") == "user"]
    latest = users[-1] if users else None
    candidates = sorted(users, key=lambda m: len(text_of(m)), reverse=True)
    for message in candidates:
        if counter.count(systems + pinned) <= budget:
            break
        text = text_of(message)
        floor = MIN_LATEST_CHARS if message is latest else 0
        if len(text) <= floor:
            continue
        low, high = floor, len(text)
        while low < high:  # the longest prefix that fits
            mid = (low + high + 1) // 2
            message["content"] = text[:mid].rstrip() + ELLIPSIS
            if counter.count(systems + pinned) <= budget:
                low = mid
            else:
                high = mid - 1
        message["content"] = text[:low].rstrip() + ELLIPSIS
    return systems + pinned


def _message_text(message: Message) -> str:
    text = text_of(message)
    if message.get("tool_calls"):
        text += json.dumps(message["tool_calls"], separators=(",", ":"))
    return text


class EstimatingCounter:
    """Characters per token, starting conservative and calibrated from real usage.

    After each model call, `calibrate(messages, prompt_tokens)` moves the ratio toward what the
    server counted. A safety margin keeps the estimate on the high side.
    """

    def __init__(self, chars_per_token: float = 3.0, margin: float = 1.1) -> None:
        self.chars_per_token = chars_per_token
        self.margin = margin
        self.samples = 0

    def count(self, messages: Sequence[Message]) -> int:
        chars = sum(len(_message_text(m)) for m in messages)
        return math.ceil(chars / self.chars_per_token * self.margin) + MESSAGE_OVERHEAD * len(
            messages
        )

    def calibrate(self, messages: Sequence[Message], prompt_tokens: int | None) -> None:
        if not prompt_tokens:
            return
        content_tokens = prompt_tokens - MESSAGE_OVERHEAD * len(messages)
        chars = sum(len(_message_text(m)) for m in messages)
        if content_tokens <= 0 or chars < 200:
            return
        observed = chars / content_tokens
        weight = 1 / (self.samples + 1) if self.samples < 4 else 0.2
        self.chars_per_token += (observed - self.chars_per_token) * weight
        self.samples += 1


class TiktokenCounter:
    """Exact counts for OpenAI models, when tiktoken and its encoding are available locally."""

    def __init__(self, encoding: Any) -> None:  # a tiktoken Encoding; tiktoken has no stubs
        self._encoding = encoding

    def count(self, messages: Sequence[Message]) -> int:
        return (
            sum(len(self._encoding.encode(_message_text(m))) + MESSAGE_OVERHEAD for m in messages)
            + 3
        )

    def calibrate(self, messages: Sequence[Message], prompt_tokens: int | None) -> None:
        return None


def counter_for(model: str) -> EstimatingCounter | TiktokenCounter:
    try:
        import tiktoken  # optional: only when the deployment installed it

        return TiktokenCounter(tiktoken.encoding_for_model(model))
    except Exception:  # not installed, unknown model, or no cached encoding (no network)
        return EstimatingCounter()


def tools_tokens(tools: list[dict[str, Any]] | None, counter: TokenCounter) -> int:
    """What the tool schemas sent along with a prompt cost."""
    if not tools:
        return 0
    return counter.count([{"role": "system", "content": json.dumps(tools, separators=(",", ":"))}])


def text_tokens(text: str, counter: TokenCounter) -> int:
    """What a model's output costs: its text, without a message's overhead."""
    return max(0, counter.count([{"role": "assistant", "content": text}]) - MESSAGE_OVERHEAD)


class TokenBudgets:
    """Prompt budgets (the window less the output budget and the tool schemas sent along),
    computed once per (tools, output budget) for the life of an agent."""

    def __init__(self, context_tokens: int, counter: TokenCounter) -> None:
        self.context_tokens = context_tokens
        self.counter = counter
        self._cache: dict[tuple[int, int], int] = {}

    def prompt_budget(self, tools: list[dict[str, Any]] | None, output_tokens: int) -> int:
        key = (id(tools) if tools else 0, output_tokens)
        if key not in self._cache:
            fixed = tools_tokens(tools, self.counter)
            self._cache[key] = max(1, self.context_tokens - output_tokens - fixed)
        return self._cache[key]

    def fit(
        self,
        messages: Sequence[Message],
        tools: list[dict[str, Any]] | None,
        output_tokens: int,
    ) -> list[Message]:
        return fit_messages(messages, self.prompt_budget(tools, output_tokens), self.counter)
