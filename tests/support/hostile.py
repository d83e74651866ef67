"""Hostile shapes of model text, and the CPU time each reader of a model's text takes on them:
shared by tests/unit/test_parsing_linear.py (which bounds the growth) and
bench/parsing_bench.py (which prints the curve)."""

from __future__ import annotations

import time
from collections.abc import Callable

from sommelier.agent.output import AnswerContext, extract_json
from sommelier.agent.protocols import PROTOCOLS
from sommelier.agent.text import fenced_blocks
from sommelier.agent.tools import ToolRegistry, tool_calls_in_text
from sommelier.chat.reply import ReplySpec

SPEC = ReplySpec()
CONTEXT = AnswerContext(grounded=frozenset({"sm-001"}))
CHUNK = 16  # characters per streamed delta, as servers send them

# Each makes a text of about n characters.
SHAPES: dict[str, Callable[[int], str]] = {
    "fence + spaces": lambda n: "```json" + " " * n,
    "backticks": lambda n: "`" * n,
    "newlines": lambda n: "\n" * n,
    "indented lines": lambda n: ("\n" + " " * 60) * (n // 61),
    "brackets": lambda n: "[" * n,
    "braces": lambda n: "{" * n,
    "open string": lambda n: '{"intro": "' + "a\\" * (n // 2),
    "separators": lambda n: "\n---" * (n // 4),
}


def _streamed(protocol: str) -> Callable[[str], object]:
    def read(text: str) -> object:
        parser = PROTOCOLS[protocol].parser(SPEC, CONTEXT)
        for start in range(0, len(text), CHUNK):
            parser.feed(text[start : start + CHUNK])
        return parser.finish("stop")

    return read


def _whole(protocol: str) -> Callable[[str], object]:
    def read(text: str) -> object:
        parser = PROTOCOLS[protocol].parser(SPEC, CONTEXT)
        parser.feed(text)
        return parser.finish("stop")

    return read


READERS: dict[str, Callable[[str], object]] = {
    **{f"{p} streamed": _streamed(p) for p in PROTOCOLS},
    **{f"{p} whole": _whole(p) for p in PROTOCOLS},
    "extract_json": extract_json,
    "fenced_blocks": fenced_blocks,
    "tool calls in text": lambda text: tool_calls_in_text(text, ToolRegistry()),
}


def cpu_seconds(read: Callable[[str], object], text: str, repeats: int = 1) -> float:
    """The least CPU time of `repeats` reads (the least is the one the machine disturbed least)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        read(text)
        best = min(best, time.process_time() - started)
    return best
