"""The output protocols as pure parsers, fed chunk by chunk."""

import json

import pytest

from sommelier.agent.output import AnswerContext, ErrorKind
from sommelier.agent.parsers import (
    DelimitedParser,
    ItemReady,
    JsonParser,
    NdjsonParser,
    TextDelta,
)
from sommelier.chat.reply import ReplySpec

SPEC = ReplySpec()
GROUNDED = AnswerContext(grounded={"sm-001", "sm-002"})
META = {
    "response_type": "recommendation",
    "wines": [{"wine_id": "sm-001", "why": "Lovely."}],
    "closing": "More?",
    "guard": None,
}
DELIMITED = "Here is a great red.\nIt loves steak.\n---\n" + json.dumps(META)


def run(parser, chunks):  # type: ignore[no-untyped-def]
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events, parser.finish("stop")


def shown(events) -> str:  # type: ignore[no-untyped-def]
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("cut", range(1, len(DELIMITED)))
def test_delimiter_split_across_chunks_in_every_position(cut: int) -> None:
    events, result = run(DelimitedParser(SPEC, GROUNDED), [DELIMITED[:cut], DELIMITED[cut:]])
    assert "-" not in shown(events) and "{" not in shown(events)
    assert shown(events) == "Here is a great red.\nIt loves steak.\n"
    assert result.ok and result.ids == ["sm-001"]
    assert result.reply.intro == "Here is a great red.\nIt loves steak."


def test_delimiter_character_by_character() -> None:
    events, result = run(DelimitedParser(SPEC, GROUNDED), list(DELIMITED))
    assert shown(events) == "Here is a great red.\nIt loves steak.\n" and result.ok


def test_markdown_rule_inside_the_text_is_text() -> None:
    text = "Two styles:\n---\nBold reds first.\n---\n" + json.dumps(META)
    events, result = run(DelimitedParser(SPEC, GROUNDED), list(text))
    assert shown(events) == "Two styles:\n---\nBold reds first.\n"
    assert result.ok and result.reply.intro == "Two styles:\n---\nBold reds first."


def test_longer_dash_lines_are_text() -> None:
    text = "A\n----\nB\n--- not json\n---\n" + json.dumps(META)
    events, result = run(DelimitedParser(SPEC, GROUNDED), [text])
    assert shown(events) == "A\n----\nB\n--- not json\n" and result.ok


def test_missing_delimiter() -> None:
    events, result = run(DelimitedParser(SPEC, GROUNDED), ["Just text, ", "no JSON at all."])
    assert shown(events) == "Just text, no JSON at all."
    assert result.error_kind == ErrorKind.missing_delimiter


def test_delimited_bad_json() -> None:
    _, result = run(DelimitedParser(SPEC, GROUNDED), ['Text\n---\n{"response_type": '])
    assert result.error_kind == ErrorKind.invalid_json and "after ---" in result.error_message


def test_delimited_missing_fields_go_to_repair() -> None:
    _, result = run(
        DelimitedParser(SPEC, GROUNDED), ['Text\n---\n{"response_type": "informational"}']
    )
    assert result.error_kind == ErrorKind.schema and "wines" in result.error_message


def test_json_protocol_streams_the_intro() -> None:
    raw = json.dumps(
        {
            "response_type": "informational",
            "intro": 'Say "hi"\nand café \u00e9',
            "wines": [],
            "closing": "",
            "guard": None,
        }
    )
    events, result = run(JsonParser(SPEC, GROUNDED), list(raw))
    assert shown(events) == 'Say "hi"\nand café é'
    assert result.ok


def ndjson(*items) -> str:  # type: ignore[no-untyped-def]
    return "".join(json.dumps(i) + "\n" for i in items)


INTRO = {"type": "intro", "text": "Two picks:"}
WINE1 = {"type": "wine", "wine_id": "sm-001", "why": "Silky."}
WINE2 = {"type": "wine", "wine_id": "sm-002", "why": "Bold."}
CLOSE = {"type": "closing", "text": "Cheaper?"}
METAL = {"type": "meta", "response_type": "recommendation", "guard": None}


def test_ndjson_items_are_ready_as_soon_as_each_line_completes() -> None:
    parser = NdjsonParser(SPEC, GROUNDED)
    text = ndjson(INTRO, WINE1, WINE2, CLOSE, METAL)
    first_wine_at = None
    for i, char in enumerate(text):
        for event in parser.feed(char):
            if isinstance(event, ItemReady) and event.kind == "wine" and first_wine_at is None:
                first_wine_at = i
    assert first_wine_at == len(ndjson(INTRO, WINE1)) - 1  # the newline ending that line
    result = parser.finish("stop")
    assert result.ok and result.ids == ["sm-001", "sm-002"] and result.reply.intro == "Two picks:"


def test_ndjson_broken_middle_line_is_skipped_and_named(caplog) -> None:  # type: ignore[no-untyped-def]
    text = ndjson(INTRO, WINE1) + '{"type": "wine", "wine_id": \n' + ndjson(CLOSE, METAL)
    events, result = run(NdjsonParser(SPEC, GROUNDED), [text])
    assert [e.kind for e in events if isinstance(e, ItemReady)] == [
        "intro",
        "wine",
        "closing",
        "meta",
    ]
    assert (
        result.error_kind == ErrorKind.schema and "line 3: not valid JSON" in result.error_message
    )
    assert "ndjson line skipped" in caplog.text


def test_ndjson_ungrounded_wine_line() -> None:
    bad = {"type": "wine", "wine_id": "sm-999", "why": "Invented."}
    events, result = run(NdjsonParser(SPEC, GROUNDED), [ndjson(INTRO, bad, CLOSE, METAL)])
    assert not any(isinstance(e, ItemReady) and e.kind == "wine" for e in events)
    assert result.error_kind == ErrorKind.grounding and "line 2" in result.error_message


def test_ndjson_empty_lines_are_ignored() -> None:
    text = "\n\n" + ndjson(INTRO) + "\n  \n" + ndjson(WINE1, WINE2, CLOSE, METAL) + "\n"
    _, result = run(NdjsonParser(SPEC, GROUNDED), [text])
    assert result.ok


def test_ndjson_stream_cut_mid_line() -> None:
    text = ndjson(INTRO, WINE1) + '{"type": "meta", "response_ty'
    _, result = run(NdjsonParser(SPEC, GROUNDED), [text])
    assert result.error_kind == ErrorKind.schema
    assert "line 3: not valid JSON" in result.error_message and "no {" in result.error_message


def test_ndjson_last_line_without_newline_counts() -> None:
    text = ndjson(INTRO, WINE1, WINE2, CLOSE) + json.dumps(METAL)
    _, result = run(NdjsonParser(SPEC, GROUNDED), [text])
    assert result.ok


@pytest.mark.parametrize("parser_class", [JsonParser, DelimitedParser, NdjsonParser])
def test_refusal_and_truncation_in_every_protocol(parser_class) -> None:  # type: ignore[no-untyped-def]
    parser = parser_class(SPEC, GROUNDED)
    parser.feed("partial")
    assert parser.finish("length").error_kind == ErrorKind.truncated
    assert parser_class(SPEC, GROUNDED).finish("stop", "no").error_kind == ErrorKind.refused


class Wordless(ReplySpec):
    """A spec whose mends took every word of an answer it accepts."""

    def validate(self, data, context, raw):  # type: ignore[no-untyped-def]
        from sommelier.agent.output import ParseResult

        return ParseResult(text="", raw=raw)


@pytest.mark.parametrize(
    ("parser_class", "answer"),
    [(JsonParser, json.dumps({**META, "intro": "Hi."})), (DelimitedParser, DELIMITED)],
)
def test_an_answer_left_with_no_text_is_sent_back_with_feedback(parser_class, answer) -> None:  # type: ignore[no-untyped-def]
    """Seen on the real model: an answer whose every sentence a mend took was sent back as
    "None: None", and the repair wrote "I didn't understand your request" without the wines."""
    _, result = run(parser_class(Wordless(), GROUNDED), [answer])
    assert result.error_kind == ErrorKind.semantic and "no text" in result.error_message
