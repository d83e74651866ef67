"""How an answer's format is asked of a server (agent/formats.py): the way that costs a small
local model the fewest tokens among those the server enforces."""

from __future__ import annotations

from sommelier.agent.formats import FormatNegotiator
from sommelier.agent.model import OutputFormat
from sommelier.agent.profile import EndpointProfile, Support
from sommelier.chat.answer import reply_json_schema

ANSWER = OutputFormat("reply", schema=reply_json_schema(["sm-001", "sm-002"]))


def test_a_llama_cpp_server_gets_compact_json_from_our_grammar() -> None:
    """llama-server enforces both; its own json_schema grammar lets the model indent and break
    lines (about 20 more tokens an answer on Qwen2.5-1.5B), ours allows one space at most."""
    llama_server = EndpointProfile(json_schema=Support.enforced, grammar=Support.enforced)
    fields = FormatNegotiator(llama_server).fields(ANSWER)
    assert "response_format" not in fields
    grammar = fields["extra_body"]["grammar"]
    assert '"\\"wine_id\\""' in grammar and '"\\"sm-002\\""' in grammar
    assert "\\n" not in grammar and "\\t" not in grammar  # no newline or tab anywhere in it


def test_a_server_without_grammars_gets_the_json_schema() -> None:
    hosted = EndpointProfile(json_schema=Support.enforced, grammar=Support.rejected)
    fields = FormatNegotiator(hosted).fields(ANSWER)
    assert fields["response_format"]["type"] == "json_schema"
    assert fields["response_format"]["json_schema"]["schema"] == ANSWER.schema
