"""What an endpoint can do, as `sommelier model check` found it, and the choices that follow.

Servers differ more than their shared API suggests (see specs/real-models.md): llama-cpp-python
500s on `json_schema` but enforces `json_object` with a schema; llama.cpp takes a GBNF grammar;
small models write tool calls as text unless the call is forced; some servers stream without
usage. The profile records each of these once, so every later call goes straight to what works.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any


class Support(StrEnum):
    enforced = "enforced"  # accepted, and the output followed a schema no free model would
    accepted = "accepted"  # 200, but the output did not follow it: the server ignores it
    rejected = "rejected"  # the server refused the request
    unknown = "unknown"  # not checked


class FormatMode(StrEnum):
    """How a JSON schema is asked of the server."""

    json_schema = "json_schema"  # response_format json_schema, strict (OpenAI, vLLM, llama-server)
    json_object = "json_object"  # response_format json_object with a "schema" field (llama.cpp)
    grammar = "grammar"  # the schema as a GBNF grammar (llama.cpp servers)
    json_object_plain = "json_object_plain"  # JSON mode without a schema
    prompt = "prompt"  # nothing sent: the format is in the prompt only


class Strategy(StrEnum):
    native = "native"  # the model calls tools itself (tool_choice auto)
    planner = "planner"  # a constrained planning step; the runtime runs the tools
    auto = "auto"  # native when the endpoint returns real tool calls, else planner


# The order in which an unchecked endpoint is tried, most exact first.
FALLBACK_ORDER = (
    FormatMode.json_schema,
    FormatMode.json_object,
    FormatMode.json_object_plain,
    FormatMode.prompt,
)


@dataclass(frozen=True, slots=True)
class EndpointProfile:
    reachable: bool = True
    json_schema: Support = Support.unknown
    json_object_schema: Support = Support.unknown
    grammar: Support = Support.unknown
    tools_auto: bool | None = None  # real tool_calls with tool_choice "auto"
    tools_forced: bool | None = None  # real tool_calls when the call names the tool
    streaming: bool | None = None
    stream_usage: bool | None = None
    usage: bool | None = None
    context_tokens: int | None = None
    prompt_tokens_per_second: float | None = None
    generation_tokens_per_second: float | None = None
    concurrency: int | None = None  # requests the server serves at once (its slots)
    interrupts: bool | None = None  # a second request cuts a running streamed answer

    @property
    def checked(self) -> bool:
        return self.json_schema != Support.unknown

    def schema_mode(self) -> FormatMode | None:
        """The best way to enforce a JSON schema here; None when unchecked."""
        if not self.checked:
            return None
        if self.grammar == Support.enforced:
            # Our own grammar (agent/grammar.py) writes compact JSON, keys in order.
            # llama-server's json_schema grammar lets a model indent and break lines: on
            # Qwen2.5-1.5B 20 more tokens an answer, 2 s on 2 cores.
            return FormatMode.grammar
        for support in (Support.enforced, Support.accepted):
            if self.json_schema == support:
                return FormatMode.json_schema
            if self.json_object_schema == support:
                return FormatMode.json_object
        return FormatMode.prompt

    def strategy(self) -> Strategy:
        return Strategy.native if self.tools_auto else Strategy.planner

    def to_json(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, StrEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EndpointProfile:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("json_schema", "json_object_schema", "grammar"):
            if name in values:
                values[name] = Support(values[name])
        return cls(**values)


UNCHECKED = EndpointProfile()
