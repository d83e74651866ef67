"""Assembling a streamed chat completion from its chunks: content, tool calls, usage, finish."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.model import Completion, ToolCall, Usage, cached_tokens

# A stream longer than this is cut: no real answer is this long, and a runaway or hostile
# server must not fill memory or the screen.
MAX_STREAM_CHARS = 200_000


@dataclass
class StreamAssembler:
    content: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish_reason: str | None = None
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)
    chunks: int = 0
    chars: int = 0

    def add(self, chunk: Any) -> str:
        """Take one chunk; returns the new content text it carried."""
        self.chunks += 1
        if getattr(chunk, "usage", None) is not None:
            usage, cached = chunk.usage, cached_tokens(chunk)
            if cached is None:  # llama.cpp sent its timings on the chunk before
                cached = self.usage.cached_tokens
            self.usage = Usage(usage.prompt_tokens, usage.completion_tokens, cached)
        elif (cached := cached_tokens(chunk)) is not None:  # llama.cpp: timings, no usage
            self.usage = Usage(self.usage.prompt_tokens, self.usage.completion_tokens, cached)
        choices = getattr(chunk, "choices", None)
        if not choices:
            return ""
        choice = choices[0]
        delta = choice.delta
        text = ""
        if delta is not None:
            text = self._content(delta.content or "")
            if getattr(delta, "refusal", None):
                self.refusal = (self.refusal or "") + delta.refusal
            for call in delta.tool_calls or []:
                self._tool_call(call)
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        return text

    def _content(self, text: str) -> str:
        room = MAX_STREAM_CHARS - self.chars
        if len(text) > room:
            text = text[: max(room, 0)]
            self.finish_reason = "length"
        self.chars += len(text)
        if text:
            self.content.append(text)
        return text

    @property
    def overflowed(self) -> bool:
        return self.chars >= MAX_STREAM_CHARS

    def _tool_call(self, call: Any) -> None:
        slot = self.calls.setdefault(call.index or 0, {"id": "", "name": "", "arguments": ""})
        if call.id:
            slot["id"] = call.id
        function = call.function
        if function is not None and function.name:
            # Some servers (llama-cpp-python) repeat the whole name in every chunk; others
            # send it in pieces.
            name = slot["name"]
            slot["name"] = function.name if function.name.startswith(name) else name + function.name
        if function is not None and function.arguments:
            slot["arguments"] += function.arguments

    @property
    def text(self) -> str:
        return "".join(self.content)

    def completion(self, latency_ms: int, model: str) -> Completion:
        return Completion(
            content=self.text or None,
            tool_calls=[
                ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                for i, c in sorted(self.calls.items())
            ],
            finish_reason=self.finish_reason,
            refusal=self.refusal,
            usage=self.usage,
            latency_ms=latency_ms,
            model=model,
        )
