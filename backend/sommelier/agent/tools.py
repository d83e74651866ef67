"""Typed tools: a pydantic argument model, a JSON schema generated from it, an async function.

Bad calls (unknown tool, malformed JSON, arguments that fail validation, a tool that raises a
`ToolError`) become error results that tell the model what was wrong; the turn goes on.
Several calls in one model message run concurrently; results come back in call order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from sommelier.agent.llm import ToolCall

log = logging.getLogger("sommelier.tools")

MAX_RESULT_CHARS = 6000


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns: JSON-able data and the ids of the entities it showed."""

    data: Any
    references: frozenset[str] = frozenset()


@dataclass(slots=True)
class ToolResult:
    call: ToolCall
    content: str  # compact JSON sent back to the model
    ok: bool
    references: frozenset[str] = frozenset()
    error: str | None = None
    latency_ms: int = 0
    arguments: Any = None


@dataclass
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any], Awaitable[ToolOutput]]

    def spec(self) -> dict[str, Any]:
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }


def compact_json(data: Any) -> str:
    if isinstance(data, BaseModel):
        data = data.model_dump(exclude_none=True)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def _describe(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


@dataclass
class ToolRegistry:
    tools: dict[str, Tool] = field(default_factory=dict)
    _specs: list[dict[str, Any]] | None = None

    def add(self, tool: Tool) -> None:
        self.tools[tool.name] = tool
        self._specs = None

    def specs(self) -> list[dict[str, Any]]:
        # Generating JSON schemas is the costliest thing in a turn: do it once.
        if self._specs is None:
            self._specs = [tool.spec() for tool in self.tools.values()]
        return self._specs

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    async def run_all(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        return list(await asyncio.gather(*(self.run(call) for call in calls)))

    async def run(self, call: ToolCall) -> ToolResult:
        started = time.perf_counter()
        result = await self._run(call)
        result.latency_ms = int((time.perf_counter() - started) * 1000)
        if not result.ok:
            log.info(
                "tool_call_failed",
                extra={"event": "tool_call_failed", "tool": call.name, "error": result.error},
            )
        return result

    async def _run(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            return _error(call, f"unknown tool {call.name!r}; available tools: {known}")
        try:
            raw = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _error(call, f"arguments are not valid JSON ({exc.msg} at char {exc.pos})")
        if not isinstance(raw, dict):
            return _error(call, "arguments must be a JSON object")
        try:
            arguments = tool.arguments.model_validate(raw)
        except ValidationError as exc:
            return _error(call, f"invalid arguments: {_describe(exc)}", raw)
        try:
            output = await tool.run(arguments)
        except ToolError as exc:
            return _error(call, str(exc), raw)
        content = compact_json(output.data)
        if len(content) > MAX_RESULT_CHARS:
            content = content[:MAX_RESULT_CHARS] + "…(cut)"
        return ToolResult(call, content, True, output.references, arguments=raw)


def _error(call: ToolCall, message: str, arguments: Any = None) -> ToolResult:
    content = compact_json({"error": message, "tool": call.name})
    return ToolResult(call, content, False, error=message, arguments=arguments)


_FENCE = re.compile(r"```(?:json|tool_call|tool)?\s*(.*?)```", re.DOTALL)


def tool_calls_in_text(text: str | None, registry: ToolRegistry) -> list[ToolCall]:
    """Tool calls that a small model wrote as JSON text instead of `tool_calls`.

    Recognises {"name": ..., "arguments": {...}} (also "parameters", or {"tool": ...}), alone or
    in a list, bare or fenced. Only well-formed calls to known tools count.
    """
    if not text or "{" not in text:
        return []
    candidates = [m.group(1) for m in _FENCE.finditer(text)] or [text.strip()]
    calls: list[ToolCall] = []
    for candidate in candidates:
        try:
            parsed = json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
        items = parsed if isinstance(parsed, list) else [parsed]
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("function"), dict):
                item = item["function"]
            if not isinstance(item, dict):
                continue
            name = item.get("name") or item.get("tool")
            args = item.get("arguments", item.get("parameters", {}))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    continue
            if isinstance(name, str) and name in registry and isinstance(args, dict):
                calls.append(ToolCall(f"text_call_{len(calls)}", name, json.dumps(args)))
    return calls
