"""Chat messages in the OpenAI wire format, and the small helpers every part needs."""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> Message:
    # Some servers (llama.cpp, older vLLM) reject content=null: always send a string.
    message: Message = {"role": "assistant", "content": content or ""}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def tool_result(call_id: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def text_of(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
