"""A scripted in-process model: the one part we cannot run for real in tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.llm import (
    Completion,
    ModelUnavailable,
    ResponseSchema,
    StreamBroken,
    ToolCall,
    Usage,
)
from sommelier.agent.messages import Message

Step = Any  # Completion | ModelUnavailable | Broken | a callable of the messages


def answer(content: str | dict, finish_reason: str = "stop", **kw: Any) -> Completion:
    text = content if isinstance(content, str) else json.dumps(content)
    return Completion(
        content=text, finish_reason=finish_reason, usage=Usage(100, 20), model="scripted", **kw
    )


def tools(*calls: tuple[str, dict | str]) -> Completion:
    return Completion(
        content=None,
        tool_calls=[
            ToolCall(f"call_{i}", name, args if isinstance(args, str) else json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ],
        finish_reason="tool_calls",
        usage=Usage(100, 10),
        model="scripted",
    )


def reply(
    wines: Sequence[str] = (),
    response_type: str = "recommendation",
    intro: str = "Here you go.",
    closing: str = "Anything else?",
    guard: str | None = None,
) -> dict:
    return {
        "response_type": response_type,
        "intro": intro,
        "wines": [{"wine_id": w, "why": f"Because {w} fits."} for w in wines],
        "closing": closing,
        "guard": guard,
    }


@dataclass
class Broken:
    """A streamed step that breaks after `after` characters of `completion`'s content."""

    completion: Completion
    after: int


@dataclass
class ScriptedModel:
    steps: list[Step]
    model: str = "scripted"
    delay: float = 0.0
    chunk: int = 7
    chunk_delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        self.requests.append(
            {"messages": [dict(m) for m in messages], "tools": tools, "max_tokens": max_tokens}
        )
        if self.delay:
            await asyncio.sleep(self.delay)
        if not self.steps:
            raise AssertionError("the scripted model was called more often than scripted")
        step = self.steps.pop(0)
        if isinstance(step, ModelUnavailable):
            raise step
        if isinstance(step, Broken):
            return step.completion
        if callable(step):
            return step(list(messages))
        return step

    async def stream(
        self,
        messages: Sequence[Message],
        on_delta: Callable[[str], None],
        **options: Any,
    ) -> Completion:
        """Streams the scripted content in small chunks; a Broken step breaks midway."""
        step = self.steps[0] if self.steps else None
        completion = await self.complete(messages, **options)
        content = completion.content or ""
        limit = step.after if isinstance(step, Broken) else len(content)
        for start in range(0, limit, self.chunk):
            on_delta(content[start : min(start + self.chunk, limit)])
            await asyncio.sleep(self.chunk_delay)
        if isinstance(step, Broken):
            raise StreamBroken("scripted break", content[:limit], limit // self.chunk + 1)
        return completion
