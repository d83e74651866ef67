"""What the person sees while an answer streams: the model's intro, except where the reply is
said from data and the model's words would be shown, then replaced."""

from __future__ import annotations

import json

import pytest

from sommelier.agent.output import AnswerContext
from sommelier.agent.parsers import TextDelta
from sommelier.agent.protocols import PROTOCOLS
from sommelier.chat.reply import ReplySpec
from tests.support.scripted import reply

ANSWER = reply(["sm-001"], intro="A firm red for your steak.")
WRITTEN = {
    "json": json.dumps(ANSWER),
    "delimited": "A firm red for your steak.\n---\n"
    + json.dumps({k: v for k, v in ANSWER.items() if k != "intro"}),
}


def shown(protocol: str, context: AnswerContext) -> str:
    parser = PROTOCOLS[protocol].parser(ReplySpec(), context)
    text = WRITTEN[protocol]
    events = [e for i in range(0, len(text), 7) for e in parser.feed(text[i : i + 7])]
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("protocol", ["json", "delimited"])
def test_a_recommendation_from_found_wines_streams_none_of_the_models_words(protocol: str) -> None:
    found = AnswerContext(grounded={"sm-001"}, tools_required=True)
    assert shown(protocol, found) == ""
    answer = AnswerContext(grounded=(), tools_required=False)
    assert shown(protocol, answer).startswith("A firm red")
