"""Schema, semantic and grounding validation of the sommelier's reply (pure)."""

import pytest

from sommelier.agent.output import ErrorKind, extract_json, parse_answer
from sommelier.chat.reply import ReplySpec, reply_json_schema
from tests.support.scripted import reply

SPEC = ReplySpec()


def parse(data, grounded=("sm-001", "sm-002", "sm-003", "sm-004"), **kw):  # type: ignore[no-untyped-def]
    import json

    raw = data if isinstance(data, str) else json.dumps(data)
    return parse_answer(raw, spec=SPEC, grounded_ids=set(grounded), **kw)


def test_valid_recommendation() -> None:
    result = parse(reply(["sm-001"]))
    assert result.ok and result.ids == ["sm-001"]
    assert result.text.startswith("Here you go.") and result.text.endswith("Anything else?")


@pytest.mark.parametrize(
    "raw",
    [
        '```json\n{"response_type":"informational","intro":"Hi","wines":[],"closing":"?","guard":null}\n```',
        'Sure! {"response_type":"informational","intro":"Hi","wines":[],"closing":"?","guard":null} Enjoy',
    ],
)
def test_fences_and_surrounding_text_are_tolerated(raw: str) -> None:
    assert parse(raw).ok


@pytest.mark.parametrize(
    ("data", "kind", "fragment"),
    [
        ("I recommend a nice Malbec", ErrorKind.invalid_json, "no JSON object"),
        ('{"response_type": "recommendation",', ErrorKind.invalid_json, "invalid JSON"),
        (
            {"response_type": "poem", "intro": "x", "wines": [], "closing": "", "guard": None},
            ErrorKind.schema,
            "response_type",
        ),
        ({"intro": "x"}, ErrorKind.schema, "wines: Field required"),
        (reply([], response_type="recommendation"), ErrorKind.semantic, "at least one wine"),
        (reply([], "informational", intro="none", closing="N/A"), ErrorKind.semantic, "empty"),
        (reply([], "off_topic", intro="", closing="Wine?"), ErrorKind.semantic, "needs an intro"),
        (
            reply([], "clarification", intro="Tell me more.", closing="Thanks."),
            ErrorKind.semantic,
            "question",
        ),
        (reply(["sm-999"]), ErrorKind.grounding, "sm-999 did not appear"),
    ],
)
def test_invalid_answers_say_exactly_what_failed(data, kind, fragment) -> None:  # type: ignore[no-untyped-def]
    result = parse(data)
    assert not result.ok
    assert result.error_kind == kind
    assert fragment in result.error_message


def test_informational_without_wines_is_valid() -> None:
    assert parse(reply([], "informational", intro="Tannins come from skins.")).ok


def test_duplicates_removed_and_at_most_three_wines() -> None:
    result = parse(reply(["sm-001", "sm-002", "sm-001", "sm-003", "sm-004"]))
    assert result.ok and result.ids == ["sm-001", "sm-002", "sm-003"]


def test_refusal_and_truncation() -> None:
    assert parse("", refusal="I can't help with that").error_kind == ErrorKind.refused
    truncated = parse('{"response_type": "recomm', finish_reason="length")
    assert truncated.error_kind == ErrorKind.truncated and "cut off" in truncated.error_message


def test_ok_requires_text() -> None:
    result = parse(reply([], "informational", intro="", closing="Which style do you like?"))
    assert result.ok and result.text == "Which style do you like?"


def test_schema_is_strict() -> None:
    schema = reply_json_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"response_type", "intro", "wines", "closing", "guard"}


def test_extract_json_rejects_arrays() -> None:
    data, problem = extract_json("[1, 2]")
    assert data is None and "JSON object" in problem
