"""Scripted in-process models: the one part we cannot run for real in unit tests.

They misbehave the way the real local models do (specs/real-models.md):
answering at once instead of calling a tool, writing the tool call as fenced JSON in the
content, ignoring a forced tool call, and, on a grammar-enforcing server, writing nothing but
the answer whenever an answer format is sent.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.messages import wire
from sommelier.agent.model import (
    Completion,
    ModelRequest,
    ModelUnavailable,
    StreamBroken,
    ToolCall,
    Usage,
)

Step = Any  # Completion | ModelUnavailable | Broken | a callable of the request


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


def fenced(name: str, arguments: dict) -> Completion:
    """A tool call the way small models write it: fenced JSON in the content."""
    call = json.dumps({"name": name, "arguments": arguments}, indent=2)
    return answer(f"```json\n{call}\n```")


def plan_text(
    action: str = "search_wines",
    arguments: dict | None = None,
    *,
    goal: str = "a wine",
    english: str = "",
    confidence: float = 0.9,
    needs_clarification: bool = False,
    unclear: Sequence[str] = (),
) -> str:
    """The planner's step, as a grammar-enforcing server writes it."""
    return json.dumps(
        {
            "goal": goal,
            "action": action,
            "arguments": arguments if arguments is not None else {"query": "", "type": None},
            "confidence": confidence,
            "needs_clarification": needs_clarification,
            "unclear": list(unclear),
            "english": english,
        }
    )


def plan(*args: Any, **kw: Any) -> Callable[[ModelRequest], Completion]:
    """The planning call's completion. Scripted for a call the runtime makes as an answer, it
    fails the test: the script no longer matches the turn."""
    completion = answer(plan_text(*args, **kw))

    def call(request: ModelRequest) -> Completion:
        if request.output is None or request.output.name != "plan":
            raise AssertionError("a plan was scripted, but the runtime asked for an answer")
        return completion

    return call


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
        "wines": [
            {"wine_id": w, "why": f"Because choice {n} fits."} for n, w in enumerate(wines, 1)
        ],
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

    def record(self, request: ModelRequest) -> None:
        self.requests.append(
            {
                "messages": [wire(m) for m in request.messages],
                "tools": request.tools,
                "tool_choice": request.tool_choice,
                "output": request.output,
                "max_tokens": request.max_tokens,
            }
        )

    def next_step(self, request: ModelRequest) -> Step:
        if not self.steps:
            raise AssertionError("the scripted model was called more often than scripted")
        step = self.steps.pop(0)
        return step(request) if callable(step) and not isinstance(step, Broken) else step

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> Completion:
        self.record(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        step = self.next_step(request)
        if isinstance(step, ModelUnavailable):
            raise step
        completion = step.completion if isinstance(step, Broken) else step
        if on_delta is None:
            return completion
        content = completion.content or ""
        limit = step.after if isinstance(step, Broken) else len(content)
        for start in range(0, limit, self.chunk):
            on_delta(content[start : min(start + self.chunk, limit)])
            await asyncio.sleep(self.chunk_delay)
        if isinstance(step, Broken):
            raise StreamBroken("scripted break", content[:limit], limit // self.chunk + 1)
        return completion


def enforcing(on_answer: Completion, on_tools: Completion) -> Callable[[ModelRequest], Completion]:
    """One call to a grammar-enforcing server (llama.cpp, Ollama, vLLM): whenever an answer
    format is sent, the model can write nothing but the answer, even if tools are offered."""

    def call(request: ModelRequest) -> Completion:
        return on_answer if request.output is not None else on_tools

    return call


_RESULT_ID = re.compile(r'(?m)(?:^- |"id":\s*")([a-z]+-\d+)')


def result_ids(request: ModelRequest) -> list[str]:
    """The wine ids in a request's tool results, in order."""
    contents = [m.get("content") or "" for m in request.messages if m.get("role") == "tool"]
    return list(dict.fromkeys(_RESULT_ID.findall("\n".join(contents))))


def from_results(
    count: int = 1, skip: int = 0, **fields: Any
) -> Callable[[ModelRequest], Completion]:
    """An answer that recommends the first wines the tools returned (a well-behaved model)."""

    def call(request: ModelRequest) -> Completion:
        return answer(reply(result_ids(request)[skip : skip + count], **fields))

    return call
