"""OpenAI-compatible model client over the official openai SDK.

Network failures (connection errors, timeouts, 429 with Retry-After, 5xx) are retried by the
SDK's own machinery, bounded by `network_retries`; they never touch the answer's repair budget.
What is left after those retries surfaces as `ModelUnavailable`.

Endpoints differ. `ResponseFormatMode.auto` starts with a strict json_schema response format and,
when a server rejects it, falls back to json_object with a `schema` field, then plain
json_object, then no response_format (the schema is in the prompt anyway). The mode that worked
is remembered for the life of the client.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import httpx2
import openai

from sommelier.agent.messages import Message
from sommelier.config import ResponseFormatMode

log = logging.getLogger("sommelier.llm")


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(slots=True)
class Completion:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    refusal: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    model: str = ""


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """The final answer's JSON schema, as the model is asked to follow it."""

    name: str
    schema: dict[str, Any]


class ModelUnavailable(Exception):
    """The model could not be reached after the network retries; `kind` says how."""

    def __init__(self, kind: str, message: str, latency_ms: int = 0) -> None:
        super().__init__(message)
        self.kind = kind  # timeout | connection | rate_limited | server_error | rejected
        self.latency_ms = latency_ms


class StreamBroken(ModelUnavailable):
    """A stream that started and then broke (connection reset, read timeout)."""

    def __init__(self, message: str, partial: str, chunks: int, latency_ms: int = 0) -> None:
        super().__init__("stream_broken", message, latency_ms)
        self.partial = partial
        self.chunks = chunks


DeltaCallback = Callable[[str], None]


class ModelClient(Protocol):
    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        max_tokens: int | None = None,
    ) -> Completion: ...


@runtime_checkable
class StreamingModelClient(ModelClient, Protocol):
    async def stream(
        self,
        messages: Sequence[Message],
        on_delta: DeltaCallback,
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        max_tokens: int | None = None,
    ) -> Completion: ...


FALLBACK_ORDER = (
    ResponseFormatMode.json_schema,
    ResponseFormatMode.json_object,  # with a "schema" field (llama.cpp, Ollama)
    "json_object_plain",
    ResponseFormatMode.prompt,
)


def response_format_for(mode: str, schema: ResponseSchema) -> dict[str, Any] | None:
    if mode == ResponseFormatMode.json_schema:
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": True},
        }
    if mode == ResponseFormatMode.json_object:
        return {"type": "json_object", "schema": schema.schema}
    if mode == "json_object_plain":
        return {"type": "json_object"}
    return None


def _rejects_response_format(exc: openai.APIStatusError) -> bool:
    if exc.status_code not in (400, 415, 422, 500, 501):
        return False
    text = f"{exc.message} {getattr(exc, 'body', '')}".lower()
    return any(w in text for w in ("response_format", "json_schema", "json schema", "schema"))


def _unavailable(exc: Exception, started: float) -> ModelUnavailable:
    latency = int((time.perf_counter() - started) * 1000)
    if isinstance(exc, openai.APITimeoutError):
        return ModelUnavailable("timeout", "the model did not answer in time", latency)
    if isinstance(exc, openai.APIConnectionError):
        return ModelUnavailable("connection", "the model server cannot be reached", latency)
    if isinstance(exc, openai.RateLimitError):
        return ModelUnavailable("rate_limited", "the model server is rate limiting us", latency)
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return ModelUnavailable("server_error", f"model server error {exc.status_code}", latency)
    status = getattr(exc, "status_code", "?")
    return ModelUnavailable("rejected", f"the model server refused the request ({status})", latency)


class OpenAIModel:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        write_timeout: float = 10.0,
        pool_timeout: float = 10.0,
        network_retries: int = 2,
        response_format: ResponseFormatMode = ResponseFormatMode.auto,
        temperature: float | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self._mode: str = (
            ResponseFormatMode.json_schema
            if response_format == ResponseFormatMode.auto
            else response_format
        )
        self._auto = response_format == ResponseFormatMode.auto
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=network_retries,
            timeout=openai.Timeout(
                connect=connect_timeout, read=read_timeout, write=write_timeout, pool=pool_timeout
            ),
        )

    @property
    def response_format_mode(self) -> str:
        return str(self._mode)

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        return await self._with_format_fallback(
            lambda: self._complete_once(messages, tools, response_schema, max_tokens)
        )

    async def _with_format_fallback(self, call: Callable[[], Awaitable[Completion]]) -> Completion:
        while True:
            try:
                return await call()
            except _FormatRejected as rejected:
                if not self._downgrade():
                    raise _unavailable(rejected.error, time.perf_counter()) from rejected.error

    def _downgrade(self) -> bool:
        position = FALLBACK_ORDER.index(self._mode)
        if position + 1 >= len(FALLBACK_ORDER):
            return False
        previous, self._mode = self._mode, FALLBACK_ORDER[position + 1]
        log.warning(
            "response_format_fallback",
            extra={"event": "response_format_fallback", "from": previous, "to": self._mode},
        )
        return True

    def _request(
        self,
        messages: Sequence[Message],
        tools: list[dict[str, Any]] | None,
        response_schema: ResponseSchema | None,
        max_tokens: int | None,
    ) -> tuple[dict[str, Any], str]:
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = tools
        if response_schema is not None:
            response_format = response_format_for(self._mode, response_schema)
            if response_format is not None:
                request["response_format"] = response_format
        if max_tokens:
            request["max_tokens"] = max_tokens
        if self.temperature is not None:
            request["temperature"] = self.temperature
        request_id = uuid.uuid4().hex[:12]
        log.info(
            "llm_request_started",
            extra={
                "event": "llm_request_started",
                "request_id": request_id,
                "model": self.model,
                "endpoint": self.base_url,
                "message_count": len(messages),
                "stream": False,
            },
        )
        return request, request_id

    async def _complete_once(
        self,
        messages: Sequence[Message],
        tools: list[dict[str, Any]] | None,
        response_schema: ResponseSchema | None,
        max_tokens: int | None,
    ) -> Completion:
        request, request_id = self._request(messages, tools, response_schema, max_tokens)
        started = time.perf_counter()
        response = await self._create(request, request_id, response_schema, started)
        latency_ms = int((time.perf_counter() - started) * 1000)
        completion = _to_completion(response, latency_ms, self.model)
        _log_completed(request_id, completion)
        return completion

    async def _create(
        self,
        request: dict[str, Any],
        request_id: str,
        response_schema: ResponseSchema | None,
        started: float,
    ) -> Any:
        try:
            return await self._client.chat.completions.create(**request)
        except openai.APIStatusError as exc:
            if response_schema and self._auto and _rejects_response_format(exc):
                raise _FormatRejected(exc) from exc
            error = _unavailable(exc, started)
            self._log_failure(request_id, error)
            raise error from exc
        except openai.APIError as exc:
            error = _unavailable(exc, started)
            self._log_failure(request_id, error)
            raise error from exc

    async def stream(
        self,
        messages: Sequence[Message],
        on_delta: DeltaCallback,
        *,
        tools: list[dict[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Like `complete`, streaming: `on_delta` gets each piece of content as it arrives.

        A stream that breaks after it started raises StreamBroken with what was received;
        one that cannot start raises ModelUnavailable (after the SDK's network retries).
        """
        return await self._with_format_fallback(
            lambda: self._stream_once(messages, on_delta, tools, response_schema, max_tokens)
        )

    async def _stream_once(
        self,
        messages: Sequence[Message],
        on_delta: DeltaCallback,
        tools: list[dict[str, Any]] | None,
        response_schema: ResponseSchema | None,
        max_tokens: int | None,
    ) -> Completion:
        request, request_id = self._request(messages, tools, response_schema, max_tokens)
        request["stream"] = True
        request["stream_options"] = {"include_usage": True}
        started = time.perf_counter()
        stream = await self._create(request, request_id, response_schema, started)
        content: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish_reason = refusal = None
        usage = Usage()
        chunks = 0
        try:
            async for chunk in stream:
                chunks += 1
                if chunk.usage is not None:
                    usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                if delta.content:
                    content.append(delta.content)
                    on_delta(delta.content)
                    log.debug(
                        "llm_response_chunk",
                        extra={
                            "event": "llm_response_chunk",
                            "request_id": request_id,
                            "chunk": chunks,
                            "chars": len(delta.content),
                        },
                    )
                if getattr(delta, "refusal", None):
                    refusal = (refusal or "") + delta.refusal
                for call in delta.tool_calls or []:
                    slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    if call.id:
                        slot["id"] = call.id
                    if call.function and call.function.name:
                        slot["name"] += call.function.name
                    if call.function and call.function.arguments:
                        slot["arguments"] += call.function.arguments
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
        except (openai.APIError, httpx2.TransportError, OSError) as exc:
            latency = int((time.perf_counter() - started) * 1000)
            broken = StreamBroken(
                f"the stream broke after {chunks} chunks ({type(exc).__name__})",
                "".join(content),
                chunks,
                latency,
            )
            self._log_failure(request_id, broken, chunks)
            raise broken from exc
        latency_ms = int((time.perf_counter() - started) * 1000)
        if finish_reason is None:
            # Every complete stream ends with a finish_reason; a connection that closed
            # without one was cut.
            broken = StreamBroken(
                f"the stream ended after {chunks} chunks without finishing",
                "".join(content),
                chunks,
                latency_ms,
            )
            self._log_failure(request_id, broken, chunks)
            raise broken
        completion = Completion(
            content="".join(content) or None,
            tool_calls=[
                ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                for i, c in sorted(calls.items())
            ],
            finish_reason=finish_reason,
            refusal=refusal,
            usage=usage,
            latency_ms=latency_ms,
            model=self.model,
        )
        _log_completed(request_id, completion, chunks)
        return completion

    @staticmethod
    def _log_failure(request_id: str, error: ModelUnavailable, chunks: int = 0) -> None:
        log.warning(
            "llm_request_failed",
            extra={
                "event": "llm_request_failed",
                "request_id": request_id,
                "error_type": error.kind,
                "error": str(error),
                "duration_ms": error.latency_ms,
                "chunks_received": chunks,
            },
        )


class _FormatRejected(Exception):
    """The server refused our response_format; the auto mode falls back and asks again."""

    def __init__(self, error: openai.APIStatusError) -> None:
        super().__init__(str(error))
        self.error = error


def _log_completed(request_id: str, completion: Completion, chunks: int | None = None) -> None:
    log.info(
        "llm_request_completed",
        extra={
            "event": "llm_request_completed",
            "request_id": request_id,
            "duration_ms": completion.latency_ms,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "finish_reason": completion.finish_reason,
            "chunks": chunks,
        },
    )


def _to_completion(response: Any, latency_ms: int, model: str) -> Completion:
    if not response.choices:
        return Completion(content=None, finish_reason=None, latency_ms=latency_ms, model=model)
    choice = response.choices[0]
    message = choice.message
    calls = [
        ToolCall(id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or "")
        for i, c in enumerate(message.tool_calls or [])
        if getattr(c, "function", None) is not None
    ]
    usage = response.usage
    return Completion(
        content=message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        refusal=getattr(message, "refusal", None),
        usage=Usage(
            usage.prompt_tokens if usage else None, usage.completion_tokens if usage else None
        ),
        latency_ms=latency_ms,
        model=getattr(response, "model", None) or model,
    )
