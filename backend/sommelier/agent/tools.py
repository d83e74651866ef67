"""Typed tools: a pydantic argument model, a JSON schema generated from it, an async function.

Before validation a tool may `prepare` the arguments: the domain's chance to normalise what a
small model wrote (read the numbers from the person's words, drop prose from filter fields).
Bad calls (unknown tool, malformed JSON, arguments that fail validation, a tool that raises)
become error results that tell the model what was wrong; the turn goes on. Several calls in one
model message run concurrently in a TaskGroup; results come back in call order.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from sommelier.agent.model import ToolCall
from sommelier.agent.output import loads
from sommelier.agent.text import clean_value, fenced_blocks
from sommelier.agent.turn import TurnInput

log = logging.getLogger("sommelier.tools")

MAX_RESULT_CHARS = 6000


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns: JSON-able data, the ids of the entities it showed (with their
    names, and the facts an answer's text may state about them, so the text can be checked
    against them), optionally the text the model reads instead of the data's JSON (a compact
    rendering costs a small model fewer tokens), and notes for the domain (not the model)."""

    data: Any
    references: frozenset[str] = frozenset()
    labels: Mapping[str, str] = field(default_factory=dict)
    text: str | None = None
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: Mapping[str, Any] = field(default_factory=dict)
    # An answer the tool wrote itself, from data (the domain's answer shape): a turn whose only
    # tools gave one ends with it, and no answer call is made.
    answer: Any = None


@dataclass(slots=True)
class ToolResult:
    call: ToolCall
    content: str  # compact JSON sent back to the model
    ok: bool
    references: frozenset[str] = frozenset()
    error: str | None = None
    latency_ms: int = 0
    arguments: Any = None
    labels: Mapping[str, str] = field(default_factory=dict)
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: Mapping[str, Any] = field(default_factory=dict)
    answer: Any = None


Prepare = Callable[[dict[str, Any], TurnInput], Awaitable[dict[str, Any]]]


@dataclass
class Tool:
    name: str
    description: str
    arguments: type[BaseModel]
    run: Callable[[Any], Awaitable[ToolOutput]]
    prepare: Prepare | None = None
    # What a planning step may write for this tool (default: every argument).
    plan_schema: dict[str, Any] | None = None
    # What this turn allows beyond it (enums of this person's own choices: a cellar to search
    # only for someone who has one): the schema, given the turn, or None for `plan_schema`.
    plan_for: Callable[[TurnInput], dict[str, Any] | None] | None = None
    # A schema that comes from elsewhere (an MCP server's tool); `arguments` then only checks
    # that the call is an object, and the tool itself checks the rest.
    parameters: dict[str, Any] | None = None
    # It answers from data (ToolOutput.answer): when the domain requires it and the words
    # settle it, the runtime runs it at once, with no model call.
    answers: bool = False
    # Its answer is the whole reply: a plan that chose it runs no tool the words required
    # besides (a search would only bury its answer under wines).
    stands_alone: bool = False
    # Whether a plan may choose it on this turn (None: always); the grammar offers only these.
    offered: Callable[[TurnInput], bool] | None = None

    def offered_on(self, turn: TurnInput | None) -> bool:
        return self.offered is None or turn is None or self.offered(turn)

    def spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema(),
            },
        }

    def schema(self) -> dict[str, Any]:
        if self.parameters is not None:
            return self.parameters
        return clean_schema(self.arguments.model_json_schema())

    def planning_schema(self, turn: TurnInput | None = None) -> dict[str, Any]:
        own = self.plan_for(turn) if self.plan_for is not None and turn is not None else None
        return own or self.plan_schema or self.schema()


class OpenArguments(BaseModel):
    """Any JSON object: the arguments of a tool whose schema another program checks."""

    model_config = ConfigDict(extra="allow")


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A compact schema: no titles, no defaults; `X | None` as a plain optional X."""
    schema = {k: v for k, v in schema.items() if k not in ("title", "default")}
    options = schema.pop("anyOf", None)
    if options:
        kept = [o for o in options if o.get("type") != "null"]
        schema = (
            {**clean_schema(kept[0]), **schema} if len(kept) == 1 else {**schema, "anyOf": kept}
        )
    if "properties" in schema:
        schema["properties"] = {k: clean_schema(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        schema["items"] = clean_schema(schema["items"])
    return schema


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

    def specs(self, turn: TurnInput | None = None) -> list[dict[str, Any]]:
        """The tools' specs, those this turn offers (all, with no turn)."""
        # Generating JSON schemas is the costliest thing in a turn: do it once.
        if self._specs is None:
            self._specs = [tool.spec() for tool in self.tools.values()]
        tools = self.tools.values()
        return [
            spec for tool, spec in zip(tools, self._specs, strict=True) if tool.offered_on(turn)
        ]

    def __contains__(self, name: str) -> bool:
        return name in self.tools

    async def run_all(self, calls: Sequence[ToolCall], turn: TurnInput) -> list[ToolResult]:
        """Run calls concurrently; a failure in one never leaves the others running."""
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self.run(call, turn)) for call in calls]
        return [task.result() for task in tasks]

    async def run(self, call: ToolCall, turn: TurnInput) -> ToolResult:
        started = time.perf_counter()
        try:
            result = await self._run(call, turn)
        except Exception as exc:  # a tool's own bug must not end the turn
            log.exception("tool_crashed", extra={"event": "tool_crashed", "tool": call.name})
            result = _error(call, f"the tool failed unexpectedly ({type(exc).__name__})")
        result.latency_ms = int((time.perf_counter() - started) * 1000)
        if not result.ok:
            log.info(
                "tool_call_failed",
                extra={"event": "tool_call_failed", "tool": call.name, "error": result.error},
            )
        return result

    async def _run(self, call: ToolCall, turn: TurnInput) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None or not tool.offered_on(turn):
            known = ", ".join(t.name for t in self.tools.values() if t.offered_on(turn)) or "none"
            return _error(call, f"unknown tool {call.name!r}; available tools: {known}")
        raw, problem = loads(call.arguments) if call.arguments.strip() else ({}, None)
        if problem:
            return _error(call, f"arguments are not valid JSON ({problem})")
        if not isinstance(raw, dict):
            return _error(call, "arguments must be a JSON object")
        raw = clean_value(raw)  # a NUL in a filter must not reach the database
        if tool.prepare is not None:
            raw = await tool.prepare(raw, turn)
        try:
            arguments = tool.arguments.model_validate(raw)
        except ValidationError as exc:
            return _error(call, f"invalid arguments: {_describe(exc)}", raw)
        try:
            output = await tool.run(arguments)
        except ToolError as exc:
            return _error(call, str(exc), raw)
        content = output.text if output.text is not None else compact_json(output.data)
        if len(content) > MAX_RESULT_CHARS:
            content = content[:MAX_RESULT_CHARS] + "…(cut)"
        return ToolResult(
            call,
            content,
            True,
            output.references,
            arguments=raw,
            labels=output.labels,
            facts=output.facts,
            notes=output.notes,
            answer=output.answer,
        )


def _error(call: ToolCall, message: str, arguments: Any = None) -> ToolResult:
    content = compact_json({"error": message, "tool": call.name})
    return ToolResult(call, content, False, error=message, arguments=arguments)


FENCE_TAGS = ("json", "tool_call", "tool")
MAX_CALL_TEXT = 20_000  # a tool call written as text is short; longer text is no call


def tool_calls_in_text(text: str | None, registry: ToolRegistry) -> list[ToolCall]:
    """Tool calls that a small model wrote as JSON text instead of `tool_calls`.

    Recognises {"name": ..., "arguments": {...}} (also "parameters", or {"tool": ...}), alone or
    in a list, bare or fenced. Only well-formed calls to known tools count.
    """
    if not text or "{" not in text or len(text) > MAX_CALL_TEXT:
        return []
    candidates = fenced_blocks(text, FENCE_TAGS) or [text.strip()]
    calls: list[ToolCall] = []
    for candidate in candidates:
        parsed, problem = loads(candidate.strip())
        if problem:
            continue
        items = parsed if isinstance(parsed, list) else [parsed]
        for item in items:
            call = _text_call(item, registry, len(calls))
            if call is not None:
                calls.append(call)
    return calls


def _text_call(item: Any, registry: ToolRegistry, index: int) -> ToolCall | None:
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        item = item["function"]
    if not isinstance(item, dict):
        return None
    name = item.get("name") or item.get("tool")
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        args, problem = loads(args)
        if problem:
            return None
    if isinstance(name, str) and name in registry and isinstance(args, dict):
        return ToolCall(f"text_call_{index}", name, json.dumps(args))
    return None
