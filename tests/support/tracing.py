"""The Langfuse SDK exporting to an in-memory OpenTelemetry exporter."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
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


def capture(mask: bool = False) -> CapturedTrace:
    exporter = InMemorySpanExporter()
    client = Langfuse(
        # The SDK shares resources per public key: a fresh key gives a fresh exporter.
        public_key=f"pk-lf-{uuid.uuid4().hex}",
        secret_key="sk-lf-test",
        base_url="http://127.0.0.1:9",
        span_exporter=exporter,
        tracer_provider=TracerProvider(),
        mask=masking_hook(mask),
    )
    return CapturedTrace(LangfuseTracer(client, mask=mask), exporter)
