"""Chat messages in the OpenAI wire format, and the runtime's own parts of a transcript.

A transcript is a list of wire-format messages. Messages the runtime adds for itself (repair
feedback, format instructions, a compaction summary) carry a typed `part` tag, so that later
steps recognise them by type, never by their wording; `wire()` drops the tag before sending.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

Message = dict[str, Any]

PART = "part"


class Part(StrEnum):
    feedback = "feedback"  # why the previous answer could not be used
    instruction = "instruction"  # what the next call must do (plan, answer, continue)
    summary = "summary"  # the compaction summary of what the person wants


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def runtime(part: Part, content: str, role: str = "user") -> Message:
    """A message the runtime writes to the model (never shown to the person, never stored)."""
    return {"role": role, "content": content, PART: part}


def assistant(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> Message:
    # Some servers (llama.cpp, older vLLM) reject content=null: always send a string.
    message: Message = {"role": "assistant", "content": content or ""}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def tool_result(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def part_of(message: Message) -> Part | None:
    value = message.get(PART)
    return Part(value) if value else None


def is_person(message: Message) -> bool:
    """A message the person wrote (not one the runtime added)."""
    return message.get("role") == "user" and PART not in message


def wire(message: Message) -> Message:
    return {k: v for k, v in message.items() if k != PART} if PART in message else message


def text_of(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def latest_request(messages: list[Message]) -> str:
    """The person's latest message."""
    return next((text_of(m) for m in reversed(messages) if is_person(m)), "")
