"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for client tests.

Each request to /v1/chat/completions takes the next scripted step: a completion, an HTTP error
(with headers such as Retry-After), a delay longer than the client's read timeout, a dropped
connection, or a callable that decides from the request body. Every request body is recorded.
The server runs in a thread and is stopped by the fixture that started it.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    stream: list[str] | None = None  # SSE data lines, for streaming tests
    chunk_delay: float = 0.0
    raw: str | None = None  # a body sent as it is (not JSON), with the JSON content type


Step = Reply | Callable[[dict[str, Any]], Reply]


def completion(
    content: str | dict | None = None,
    tool_calls: list[tuple[str, dict]] | None = None,
    finish_reason: str | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    refusal: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Reply:
    """A chat completion; `extra`: fields a server adds beside the standard ones (llama.cpp's
    `timings`) or inside `usage` (under the key "usage")."""
    text = json.dumps(content) if isinstance(content, dict) else content
    extra = dict(extra or {})
    usage_extra = extra.pop("usage", {})
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if refusal:
        message["refusal"] = refusal
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(tool_calls)
        ]
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **usage_extra,
            },
            **extra,
        }
    )


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status, body={"error": {"message": message, "type": "error"}}, headers=headers or {}
    )


class FakeOpenAI:
    def __init__(self, steps: list[Step] | None = None) -> None:
        self.steps: list[Step] = list(steps or [])
        self.requests: list[dict[str, Any]] = []
        self.stream_ends: list[float] = []  # time.monotonic() when each stream's last byte went
        self.default: Step | None = None
        # Like llama-cpp-python's server by default (interrupt_requests): a request that
        # arrives while an answer streams cuts that answer (no finish reason).
        self.interrupting = False
        self.cut = 0  # streams cut that way
        self.in_flight = 0  # requests being answered now
        self.most_at_once = 0  # the most requests it was ever answering at once
        self._streaming: list[threading.Event] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def add(self, *steps: Step) -> None:
        with self._lock:
            self.steps.extend(steps)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.interrupting:
                for running in self._streaming:
                    running.set()
            self.requests.append(body)
            step = self.steps.pop(0) if self.steps else self.default
        if step is None:
            return error(500, "no scripted step left")
        return step(body) if callable(step) else step

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                return None

            def do_POST(self) -> None:
                with fake._lock:
                    fake.in_flight += 1
                    fake.most_at_once = max(fake.most_at_once, fake.in_flight)
                try:
                    self._answer()
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = fake._next(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if reply.stream is not None:
                    self._stream(reply)
                    return
                payload = (reply.raw if reply.raw is not None else json.dumps(reply.body)).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                # The client may have given up first (a read timeout): nothing left to say.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                interrupted = threading.Event()
                with fake._lock:
                    fake._streaming.append(interrupted)
                try:
                    for line in reply.stream or []:
                        if interrupted.is_set():
                            with fake._lock:
                                fake.cut += 1
                            self.connection.shutdown(2)
                            return
                        if line == "<drop>":
                            self.connection.shutdown(2)
                            return
                        self.wfile.write(f"data: {line}\n\n".encode())
                        self.wfile.flush()
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                except (BrokenPipeError, ConnectionResetError):
                    return
                finally:
                    fake.stream_ends.append(time.monotonic())
                    with fake._lock:
                        fake._streaming.remove(interrupted)

        return Handler


def streamed(
    content: str | dict | None = None,
    tool_calls: list[tuple[str, dict]] | None = None,
    *,
    chunk: int = 8,
    chunk_delay: float = 0.0,
    drop_after: int | None = None,
    finish_reason: str | None = None,
    usage: bool = True,
    timings: dict[str, Any] | None = None,
) -> Reply:
    """A streamed completion as server-sent events; `drop_after` chunks, then a dropped line.
    Without `usage`, no usage chunk (llama-cpp-python's server sends none); `timings` go on the
    last chunk, as llama.cpp's server sends them."""
    text = json.dumps(content) if isinstance(content, dict) else (content or "")
    base = {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "fake-model",
    }
    events: list[str] = []
    for start in range(0, len(text), chunk):
        delta = {"content": text[start : start + chunk]}
        events.append(
            json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        )
    for i, (name, args) in enumerate(tool_calls or []):
        delta = {
            "tool_calls": [
                {
                    "index": i,
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ]
        }
        events.append(
            json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        )
    if drop_after is not None:
        events = [*events[:drop_after], "<drop>"]
    else:
        reason = finish_reason or ("tool_calls" if tool_calls else "stop")
        last = {"index": 0, "delta": {}, "finish_reason": reason}
        events.append(
            json.dumps({**base, "choices": [last], **({"timings": timings} if timings else {})})
        )
        if usage:
            counts = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
            events.append(json.dumps({**base, "choices": [], "usage": counts}))
        events.append("[DONE]")
    return Reply(stream=events, chunk_delay=chunk_delay)
