"""The recovery ladder after the repair retries are spent.

Level 1 (in the loop): repair with feedback, `max_retries` times.
Level 2: compaction, one attempt. The context is rebuilt from scratch: the system prompt, one
system message summarising what the user wants (a domain `Summarizer`), this turn's tool results
(so grounding still holds) and a request for the answer in the required format only.
Level 3: reset. The runtime reports it; the chat service closes the conversation and tells the
person it is starting fresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sommelier.agent.messages import Message, system, text_of, user
from sommelier.agent.tools import ToolResult

Summarizer = Callable[[Sequence[Message]], str]

COMPACTION_REQUEST = (
    "Answer my latest request now, in the required JSON format only, using only the tool results "
    "above. My latest request: {request}"
)


def compaction_context(
    messages: Sequence[Message],
    tool_results: Sequence[ToolResult],
    summarize: Summarizer,
) -> list[Message]:
    systems = [m for m in messages if m.get("role") == "system"]
    latest_user = next(
        (text_of(m) for m in reversed(messages) if m.get("role") == "user" and not _is_feedback(m)),
        "",
    )
    context = [*systems, system(summarize(messages))]
    grounded = [r.content for r in tool_results if r.ok]
    if grounded:
        context.append(
            system(
                "Tool results from this turn (the only wines you may recommend):\n"
                + "\n".join(grounded)
            )
        )
    context.append(user(COMPACTION_REQUEST.format(request=latest_user)))
    return context


FEEDBACK_PREFIX = "Your previous answer could not be used."


def _is_feedback(message: Message) -> bool:
    return text_of(message).startswith(FEEDBACK_PREFIX)
