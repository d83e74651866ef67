"""Response-format negotiation: how a call's OutputFormat becomes request fields on this server.

With a checked profile the mode is known from the start. Unchecked, the client starts with the
most exact mode and falls back when the server rejects it. Until a mode has worked once, calls
that carry it go out without the SDK's network retries, so a rejection (llama-cpp-python answers
`json_schema` with HTTP 500) is recognised on its first answer instead of after three.
"""

from __future__ import annotations

import logging
from typing import Any

import openai

from sommelier.agent.grammar import json_grammar
from sommelier.agent.model import OutputFormat
from sommelier.agent.profile import FALLBACK_ORDER, EndpointProfile, FormatMode, Support

log = logging.getLogger("sommelier.llm")


class FormatNegotiator:
    def __init__(self, profile: EndpointProfile, forced: FormatMode | None = None) -> None:
        self.profile = profile
        self.mode = forced or profile.schema_mode() or FALLBACK_ORDER[0]
        # A forced or checked mode needs no probing; an unchecked guess does.
        self.confirmed = forced is not None or profile.checked
        self.can_fall_back = forced is None and not profile.checked
        self.grammar_ok = profile.grammar == Support.enforced

    def fields(self, output: OutputFormat | None) -> dict[str, Any]:
        """Request fields that ask for `output` the way this server understands."""
        if output is None:
            return {}
        if output.schema is None:
            # A text protocol: only a grammar can enforce it.
            return {"extra_body": {"grammar": output.grammar}} if self._grammar(output) else {}
        mode = self.mode
        if mode == FormatMode.json_schema:
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": output.name, "schema": output.schema, "strict": True},
                }
            }
        if mode == FormatMode.json_object:
            return {"response_format": {"type": "json_object", "schema": output.schema}}
        if mode == FormatMode.grammar:
            return {"extra_body": {"grammar": json_grammar(output.schema)}}
        if mode == FormatMode.json_object_plain:
            return {"response_format": {"type": "json_object"}}
        return {}

    def _grammar(self, output: OutputFormat) -> bool:
        return output.grammar is not None and self.grammar_ok

    def probing(self, output: OutputFormat | None) -> bool:
        """Whether this call tries a mode that has not worked yet."""
        return (
            output is not None
            and output.schema is not None
            and not self.confirmed
            and self.mode != FormatMode.prompt
        )

    def worked(self, output: OutputFormat | None) -> None:
        if output is not None and output.schema is not None:
            self.confirmed = True

    def rejected(self, exc: openai.APIStatusError) -> bool:
        """True when `exc` refused our response format and a simpler mode is left to try."""
        if not (self.can_fall_back and not self.confirmed and _is_format_rejection(exc)):
            return False
        position = FALLBACK_ORDER.index(self.mode)
        if position + 1 >= len(FALLBACK_ORDER):
            return False
        previous, self.mode = self.mode, FALLBACK_ORDER[position + 1]
        log.warning(
            "response_format_fallback",
            extra={"event": "response_format_fallback", "from": previous, "to": self.mode},
        )
        return True


def _is_format_rejection(exc: openai.APIStatusError) -> bool:
    if exc.status_code not in (400, 415, 422, 500, 501):
        return False
    text = f"{exc.message} {getattr(exc, 'body', '')}".lower()
    return any(w in text for w in ("response_format", "json_schema", "json schema", "schema"))
