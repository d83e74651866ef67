"""The OpenAI-compatible model client, over the official openai SDK.

Network failures (connection errors, timeouts, 429 with Retry-After, 5xx) are retried by the
SDK's own machinery, bounded by `network_retries`; they never touch the answer's repair budget.
What is left after those retries surfaces as `ModelUnavailable`. A 200 whose body is not a chat
completion is `ModelUnavailable("bad_response")`, never a traceback.

Calls stream whenever a caller shows text (`on_delta`) or the endpoint is known to stream: then
the read timeout guards silence between chunks, not the length of a slow local model's answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from sommelier.agent.formats import FormatNegotiator
from sommelier.agent.messages import wire
from sommelier.agent.model import (
    Completion,
    DeltaCallback,
    ModelRequest,
    ModelUnavailable,
    StreamBroken,
    ToolCall,
    Usage,
    cached_tokens,
)
from sommelier.agent.profile import UNCHECKED, EndpointProfile, FormatMode
from sommelier.agent.streaming import StreamAssembler

log = logging.getLogger("sommelier.llm")


class _FormatRejected(Exception):
    def __init__(self, error: openai.APIStatusError) -> None:
        super().__init__(str(error))
        self.error = error


MAX_RETRY_AFTER = 60.0  # longer than this, the turn's own deadline decides


def retry_after(exc: openai.APIStatusError) -> float:
    """Seconds a 429 or 503 asks to wait (Retry-After, in seconds or as an HTTP date)."""
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if not value:
        return 1.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return 1.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def unavailable(exc: Exception, started: float) -> ModelUnavailable:
    latency = int((time.perf_counter() - started) * 1000)
    if isinstance(exc, openai.APITimeoutError):
        return ModelUnavailable("timeout", "the model did not answer in time", latency)
    if isinstance(exc, openai.APIConnectionError):
        return ModelUnavailable("connection", "the model server cannot be reached", latency)
    if isinstance(exc, openai.RateLimitError):
        return ModelUnavailable("rate_limited", "the model server is rate limiting us", latency)
    if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        return ModelUnavailable("server_error", f"model server error {exc.status_code}", latency)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return ModelUnavailable(
            "rejected", f"the model server refused the request ({status})", latency
        )
    return ModelUnavailable(
        "bad_response", f"unusable answer from the model server ({exc})", latency
    )


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
        response_format: FormatMode | None = None,
        temperature: float | None = None,
        profile: EndpointProfile = UNCHECKED,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.profile = profile
        self.formats = FormatNegotiator(profile, response_format)
        self.network_retries = network_retries
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
        return str(self.formats.mode)

    async def aclose(self) -> None:
        await self._client.close()

    async def complete(
        self, request: ModelRequest, on_delta: DeltaCallback | None = None
    ) -> Completion:
        stream = on_delta is not None or bool(self.profile.streaming)
        while True:
            try:
                if stream:
                    return await self._stream(request, on_delta or _ignore)
                return await self._once(request)
            except _FormatRejected:
                continue  # the negotiator moved to a simpler mode: ask again

    def _body(self, request: ModelRequest, stream: bool) -> tuple[dict[str, Any], str]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [wire(m) for m in request.messages],
        }
        if request.tools:
            body["tools"] = request.tools
            if request.tool_choice:
                body["tool_choice"] = {
                    "type": "function",
                    "function": {"name": request.tool_choice},
                }
        body.update(self.formats.fields(request.output))
        if request.max_tokens:
            body["max_tokens"] = request.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        request_id = uuid.uuid4().hex[:12]
        log.info(
            "llm_request_started",
            extra={
                "event": "llm_request_started",
                "request_id": request_id,
                "model": self.model,
                "endpoint": self.base_url,
                "message_count": len(request.messages),
                "stream": stream,
            },
        )
        return body, request_id

    async def _create(self, request: ModelRequest, body: dict[str, Any], started: float) -> Any:
        """The SDK call. A request that tries an unconfirmed format goes out without network
        retries first, so that a format rejection is seen on its first answer."""
        if not self.formats.probing(request.output):
            return await _call(self._client, body, started)
        try:
            return await self._client.with_options(max_retries=0).chat.completions.create(**body)
        except openai.APIStatusError as exc:
            if self.formats.rejected(exc):
                raise _FormatRejected(exc) from exc
            transient = exc.status_code >= 500 or exc.status_code == 429
            if not transient or self.network_retries < 1:
                raise unavailable(exc, started) from exc
            # The SDK would wait as the server asks before its retry: so does this one.
            await asyncio.sleep(retry_after(exc))
        except openai.APIConnectionError as exc:  # timeouts too
            if self.network_retries < 1:
                raise unavailable(exc, started) from exc
        except (openai.APIError, ValueError) as exc:
            raise unavailable(exc, started) from exc
        # Not a format problem after all: the same request with the network retries left
        # (the probe was the first attempt).
        retry = self._client.with_options(max_retries=self.network_retries - 1)
        return await _call(retry, body, started)

    async def _once(self, request: ModelRequest) -> Completion:
        body, request_id = self._body(request, stream=False)
        started = time.perf_counter()
        try:
            response = await self._create(request, body, started)
            completion = _to_completion(response, _ms(started), self.model)
        except ModelUnavailable as error:
            self._log_failure(request_id, error)
            raise
        self.formats.worked(request.output)
        _log_completed(request_id, completion)
        return completion

    async def _stream(self, request: ModelRequest, on_delta: DeltaCallback) -> Completion:
        body, request_id = self._body(request, stream=True)
        started = time.perf_counter()
        assembler = StreamAssembler()
        try:
            stream = await self._create(request, body, started)
        except ModelUnavailable as error:
            self._log_failure(request_id, error)
            raise
        async with stream:
            chunks = aiter(stream)
            while not assembler.overflowed:
                # Only the SDK's own reading can break the stream; `on_delta` (the caller's
                # parser and display) runs outside, so a bug there is never taken for a
                # broken connection.
                text = await self._next_text(chunks, assembler, request_id, started)
                if text is None:
                    break
                if text:
                    on_delta(text)
        if assembler.finish_reason is None:
            # Every complete stream ends with a finish_reason; one that closed without it was cut.
            raise self._broken("ended", "without finishing", assembler, request_id, started)
        self.formats.worked(request.output)
        completion = assembler.completion(_ms(started), self.model)
        _log_completed(request_id, completion, assembler.chunks)
        return completion

    async def _next_text(
        self, chunks: Any, assembler: StreamAssembler, request_id: str, started: float
    ) -> str | None:
        """The next chunk's text ("" for a chunk without text), None at the end; a transport
        or SDK failure as StreamBroken."""
        try:
            chunk = await anext(chunks)
            # A chunk the SDK could not make sense of is the server's fault too.
            return assembler.add(chunk)
        except StopAsyncIteration:
            return None
        except (openai.APIError, OSError, ValueError, AttributeError, TypeError) as exc:
            why = f"({type(exc).__name__})"
            raise self._broken("broke", why, assembler, request_id, started) from exc

    def _broken(
        self, how: str, why: str, assembler: StreamAssembler, request_id: str, started: float
    ) -> StreamBroken:
        """A cut stream, logged, with what it carried so far (a retry may continue it)."""
        chunks = assembler.chunks
        broken = StreamBroken(
            f"the stream {how} after {chunks} chunks {why}", assembler.text, chunks, _ms(started)
        )
        self._log_failure(request_id, broken, chunks)
        return broken

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


async def _call(client: openai.AsyncOpenAI, body: dict[str, Any], started: float) -> Any:
    try:
        return await client.chat.completions.create(**body)
    except (openai.APIError, ValueError) as exc:  # ValueError: a 200 whose JSON is broken
        raise unavailable(exc, started) from exc


def _ignore(_: str) -> None:
    return None


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _log_completed(request_id: str, completion: Completion, chunks: int | None = None) -> None:
    log.info(
        "llm_request_completed",
        extra={
            "event": "llm_request_completed",
            "request_id": request_id,
            "duration_ms": completion.latency_ms,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "cached_tokens": completion.usage.cached_tokens,
            "finish_reason": completion.finish_reason,
            "chunks": chunks,
        },
    )


def _to_completion(response: Any, latency_ms: int, model: str) -> Completion:
    """A chat completion, or ModelUnavailable("bad_response") for any other 200 body."""
    if not isinstance(response, ChatCompletion) or not isinstance(response.choices, list):
        raise ModelUnavailable(
            "bad_response", "the model server answered with something that is not a chat completion"
        )
    if not response.choices:
        # A 200 with no answer in it: a server hiccup, not an answer to repair.
        raise ModelUnavailable("bad_response", "the model server sent a completion with no choices")
    try:
        choice = response.choices[0]
        message = choice.message
        # getattr, not isinstance: a server that omits `type` still gets its calls read.
        functions = [(c.id, getattr(c, "function", None)) for c in message.tool_calls or []]
        calls = [
            ToolCall(call_id or f"call_{i}", function.name, function.arguments or "")
            for i, (call_id, function) in enumerate(functions)
            if function is not None
        ]
        usage = response.usage
        return Completion(
            content=message.content if isinstance(message.content, str) else None,
            tool_calls=calls,
            finish_reason=choice.finish_reason,
            refusal=getattr(message, "refusal", None),
            usage=Usage(
                usage.prompt_tokens if usage else None,
                usage.completion_tokens if usage else None,
                cached_tokens(response),
            ),
            latency_ms=latency_ms,
            model=getattr(response, "model", None) or model,
        )
    except (AttributeError, TypeError) as exc:
        raise ModelUnavailable("bad_response", f"malformed chat completion ({exc})") from exc
