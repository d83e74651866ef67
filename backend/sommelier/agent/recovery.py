"""The recovery ladder after the repair retries are spent, and the repair feedback itself.

Level 1 (in the loop): repair with feedback, `max_retries` times.
Level 2: compaction, one attempt. The context is rebuilt from scratch: the system prompt, one
summary of what the person wants (a domain `Summarizer`), this turn's tool results (so grounding
still holds) and a request for the answer in the protocol's own format.
Level 3: reset. The runtime reports it; the chat service closes the conversation and tells the
person it is starting fresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sommelier.agent.messages import Message, Part, is_person, latest_request, runtime, system
from sommelier.agent.output import ErrorKind, ParseResult
from sommelier.agent.tools import ToolResult

if TYPE_CHECKING:
    from sommelier.agent.protocols import OutputProtocol

Summarizer = Callable[[Sequence[Message]], str]

FEEDBACK = "Your previous answer could not be used."


def feedback_for(
    result: ParseResult[object], grounded: Sequence[str], protocol: OutputProtocol
) -> Message:
    message = f"{FEEDBACK} {result.error_kind}: {result.error_message}"
    if result.error_kind == ErrorKind.grounding:
        choices = ", ".join(grounded) or "none: recommend no wines this time"
        message += f" Ids from this turn's tool results: {choices}."
    return runtime(Part.feedback, f"{message} {protocol.reminder}")


def compaction_context(
    messages: Sequence[Message],
    tool_results: Sequence[ToolResult],
    summarize: Summarizer,
    protocol: OutputProtocol,
) -> list[Message]:
    systems = [m for m in messages if m.get("role") == "system"]
    person = [m for m in messages if is_person(m)]
    context = [*systems, runtime(Part.summary, summarize(person), role="system")]
    grounded = [r.content for r in tool_results if r.ok]
    if grounded:
        context.append(
            system(
                "Tool results from this turn (the only wines you may recommend):\n"
                + "\n".join(grounded)
            )
        )
    request = latest_request(list(messages))
    context.append(runtime(Part.instruction, protocol.compaction_request(request)))
    return context
