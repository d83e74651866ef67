"""The Langfuse SDK exporting to an in-memory OpenTelemetry exporter."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from langfuse import Langfuse
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sommelier.observability.langfuse_tracer import LangfuseTracer, masking_hook


@dataclass
class CapturedTrace:
    tracer: LangfuseTracer
    exporter: InMemorySpanExporter

    def spans(self) -> list[ReadableSpan]:
        self.tracer.flush()
        return list(self.exporter.get_finished_spans())

    def root(self) -> ReadableSpan:
        (root,) = [s for s in self.spans() if s.parent is None]
        return root

    def of_type(self, kind: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.attributes.get("langfuse.observation.type") == kind]


def attr(span: ReadableSpan, key: str) -> Any:
    value = span.attributes.get(key)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def trace_metadata(span: ReadableSpan) -> dict[str, Any]:
    prefix = "langfuse.trace.metadata."
    return {k[len(prefix) :]: attr(span, k) for k in span.attributes if k.startswith(prefix)}


def capture(mask: bool = False, base_url: str = "http://127.0.0.1:9") -> CapturedTrace:
    """Spans go to memory; scores go over HTTP to `base_url` (nothing listens by default)."""
    exporter = InMemorySpanExporter()
    client = Langfuse(
        # The SDK shares resources per public key: a fresh key gives a fresh exporter.
        public_key=f"pk-lf-{uuid.uuid4().hex}",
        secret_key="sk-lf-test",
        base_url=base_url,
        span_exporter=exporter,
        tracer_provider=TracerProvider(),
        mask=masking_hook(mask),
    )
    return CapturedTrace(LangfuseTracer(client, mask=mask), exporter)


class Ingestion:
    """Langfuse's score endpoint on 127.0.0.1: records the scores the SDK posts."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        events = self.events

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                # Langfuse SDK 5 posts scores as a list to /api/public/scores.
                if self.path == "/api/public/scores":
                    events.extend(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def scores(self) -> list[dict[str, Any]]:
        return list(self.events)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
