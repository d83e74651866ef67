"""Langfuse tracing (Python SDK v4+/v5, OpenTelemetry based).

Per turn: one trace (named "sommelier.turn", with user, session = conversation, channel and tags),
one generation per model attempt, one tool span per tool call, and trace metadata that is always
present: tool_rounds, structured_output_retries, structured_output_errors, response_type,
outcome, recovery_level.

Export runs in the SDK's BatchSpanProcessor thread with a bounded queue, so a slow or absent
Langfuse never blocks a turn. Tracing is built only when keys are configured.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langfuse import Langfuse, LangfuseOtelSpanAttributes, propagate_attributes
from opentelemetry import trace as otel_trace

from sommelier.agent.messages import Message
from sommelier.agent.model import ToolCall
from sommelier.agent.records import AgentResult, AttemptRecord, Outcome
from sommelier.agent.tools import ToolResult
from sommelier.observability.tracing import NoTracer, Tracer, mask_value

log = logging.getLogger("sommelier.tracing")

TRACE_NAME = "sommelier.turn"
SHUTDOWN_SECONDS = 5.0


def masking_hook(enabled: bool) -> Callable[..., Any] | None:
    """The SDK's mask hook: applied to every input, output and metadata before export."""
    if not enabled:
        return None

    def mask(*, data: Any, **_: Any) -> Any:
        return mask_value(data)

    return mask


class LangfuseTurn:
    def __init__(self, root: Any) -> None:
        self.root = root

    @property
    def trace_id(self) -> str | None:
        return getattr(self.root, "trace_id", None)

    def model_started(self, attempt: int, level: int, model: str, messages: list[Message]) -> Any:
        return self.root.start_observation(
            name=f"model attempt {attempt}",
            as_type="generation",
            model=model,
            input=messages,
            metadata={"attempt": attempt, "recovery_level": level},
        )

    def model_finished(self, handle: Any, record: AttemptRecord) -> None:
        if handle is None:
            return
        counts = (
            ("input", record.prompt_tokens),
            ("output", record.completion_tokens),
            ("cache_read_input_tokens", record.cached_tokens),
        )
        usage = {k: v for k, v in counts if v is not None}
        failed = record.outcome in (Outcome.invalid, Outcome.error, Outcome.refused)
        handle.update(
            output=record.output if not record.tool_calls else {"tool_calls": record.tool_calls},
            usage_details=usage or None,
            metadata={
                "attempt": record.attempt,
                "purpose": str(record.purpose),
                "recovery_level": int(record.level),
                "finish_reason": record.finish_reason,
                "latency_ms": record.latency_ms,
                "outcome": str(record.outcome),
                "error_kind": record.error_kind,
                "usage_estimated": record.usage_estimated,
                "rules": record.rules,
            },
            level="WARNING" if failed else "DEFAULT",
            status_message=record.error_message if failed else None,
        )
        handle.end()

    def tool_started(self, call: ToolCall) -> Any:
        try:
            arguments: Any = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = call.arguments
        return self.root.start_observation(name=call.name, as_type="tool", input=arguments)

    def tool_finished(self, handle: Any, result: ToolResult) -> None:
        handle.update(
            output=result.content,
            # The rules that shaped its arguments (a search's `fired`, catalog/tool_arguments.py).
            metadata={
                "ok": result.ok,
                "latency_ms": result.latency_ms,
                "rules": list(result.notes.get("fired", [])),
            },
            level="WARNING" if not result.ok else "DEFAULT",
            status_message=result.error,
        )
        handle.end()

    def record(self, result: AgentResult, status: str, shown_text: str) -> None:
        reply = result.parse.reply if result.parse is not None else None
        metadata = {
            "tool_rounds": result.tool_rounds,
            "structured_output_retries": result.retries,
            "structured_output_errors": list(result.errors),
            "response_type": str(reply.response_type) if reply is not None else None,
            "guard": str(reply.guard) if reply is not None and reply.guard else None,
            "outcome": status,
            "recovery_level": int(result.level),
            "model_attempts": len(result.attempts),
            "strategy": result.strategy,
            "plan": result.plan,
            "tools_used": sorted(result.tools_used),
        }
        self.root.update(output=shown_text, metadata=metadata)
        # Trace-level metadata: known only now, set on the trace's root span.
        span = otel_trace.get_current_span()
        for key, value in metadata.items():
            span.set_attribute(
                f"{LangfuseOtelSpanAttributes.TRACE_METADATA}.{key}",
                json.dumps(value, ensure_ascii=False),
            )


class LangfuseTracer:
    def __init__(self, client: Langfuse, mask: bool = False) -> None:
        self.client = client
        self.mask = mask

    @contextmanager
    def turn(
        self,
        *,
        turn_id: str,
        user_id: str,
        session_id: str,
        channel: str,
        text: str,
        user_name: str = "",
    ) -> Iterator[LangfuseTurn]:
        metadata = {"channel": channel, "turn_id": turn_id}
        if user_name and not self.mask:  # a name is text about a person: masked with the rest
            metadata["user_name"] = user_name
        with (
            self.client.start_as_current_observation(
                name=TRACE_NAME, as_type="agent", input={"text": text}
            ) as root,
            propagate_attributes(
                user_id=user_id,
                session_id=session_id,
                trace_name=TRACE_NAME,
                tags=["sommelier", channel],
                metadata=metadata,
            ),
        ):
            yield LangfuseTurn(root)

    def score_feedback(
        self, trace_id: str, name: str, value: float, comment: str | None, score_id: str
    ) -> None:
        """A person's 👍/👎 on a turn; the same `score_id` again replaces the score."""
        self.client.create_score(
            name=name,
            value=value,
            trace_id=trace_id,
            score_id=score_id,
            data_type="NUMERIC",
            comment=comment,
        )

    def score(
        self, trace_id: str, name: str, value: float | str, comment: str | None = None
    ) -> None:
        # The SDK's overloads pair a str value with CATEGORICAL and a float with NUMERIC/BOOLEAN.
        if isinstance(value, str):
            self.client.create_score(
                name=name, value=value, trace_id=trace_id, data_type="CATEGORICAL", comment=comment
            )
            return
        self.client.create_score(
            name=name,
            value=float(value),
            trace_id=trace_id,
            data_type="BOOLEAN" if isinstance(value, bool) else "NUMERIC",
            comment=comment,
        )

    def flush(self) -> None:
        self.client.flush()

    def shutdown(self) -> None:
        # A Langfuse that is down must not hold the process: give the flush a bounded time.
        worker = threading.Thread(target=self.client.shutdown, daemon=True)
        worker.start()
        worker.join(SHUTDOWN_SECONDS)


def tracer_from_environment(
    *, mask: bool = False, **client_options: Any
) -> LangfuseTracer | NoTracer:
    """Langfuse when LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are set; else tracing is off."""
    if not (os.environ.get("LANGFUSE_PUBLIC_KEY") and os.environ.get("LANGFUSE_SECRET_KEY")):
        return NoTracer()
    client = Langfuse(
        mask=masking_hook(mask), timeout=client_options.pop("timeout", 5), **client_options
    )
    return LangfuseTracer(client, mask=mask)


__all__ = ["LangfuseTracer", "LangfuseTurn", "Tracer", "tracer_from_environment"]
