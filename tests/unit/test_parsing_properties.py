"""Property-based: whatever a model writes, parsing never raises, chunking never changes the
result, and nothing ungrounded or unstorable is accepted (issue: 36,000 generated answers)."""

import itertools
import json
import random
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sommelier.agent.output import AnswerContext
from sommelier.agent.protocols import PROTOCOLS
from sommelier.chat.reply import ReplySpec

SPEC = ReplySpec()
GROUNDED = ("sm-001", "sm-002")
CONTEXT = AnswerContext(grounded=frozenset(GROUNDED))
EXAMPLES = 10_000

# Text a model might write, hostile bits included: escapes, surrogates, NUL, nesting, fences.
NASTY = st.sampled_from(
    ['\\"', "\\'", "\\ud83c", "\\udf77", "\\ud83c\\udf77", "\\u0000", "\\n", "\\", "---",
     "\n---\n", "[" * 200, "{" * 50, "```json", '"}', "\x00", "🍷", "\ud83c"]
)  # fmt: skip
TEXT = st.lists(st.one_of(st.text(max_size=12), NASTY), max_size=6).map("".join)
IDS = st.sampled_from([*GROUNDED, "sm-999", "", "sm-001\x00"])


@st.composite
def reply_json(draw: st.DrawFn) -> dict:
    return {
        "response_type": draw(st.sampled_from(["recommendation", "informational", "poem"])),
        "intro": draw(TEXT),
        "wines": [
            {"wine_id": draw(IDS), "why": draw(TEXT)} for _ in range(draw(st.integers(0, 3)))
        ],
        "closing": draw(TEXT),
        "guard": draw(st.sampled_from([None, "off_topic", "prompt_injection"])),
    }


def written(data: dict, protocol: str, draw: st.DrawFn) -> str:
    """The reply as the protocol writes it, sometimes broken the way models break it."""
    if protocol == "json":
        text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    elif protocol == "delimited":
        rest = {k: v for k, v in data.items() if k != "intro"}
        text = f"{data['intro']}\n---\n{json.dumps(rest)}"
    else:
        lines = [{"type": "intro", "text": data["intro"]}]
        lines += [{"type": "wine", **w} for w in data["wines"]]
        lines += [{"type": "closing", "text": data["closing"]}]
        lines += [{"type": "meta", "response_type": data["response_type"], "guard": None}]
        text = "\n".join(json.dumps(line) for line in lines)
    mutation = draw(st.sampled_from(["none", "cut", "insert", "raw"]))
    if mutation == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if mutation == "insert":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(NASTY) + text[at:]
    if mutation == "raw":
        return draw(TEXT)
    return text


def parse(protocol: str, chunks: list[str]):  # type: ignore[no-untyped-def]
    parser = PROTOCOLS[protocol].parser(SPEC, CONTEXT)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.finish("stop")


def chunked(text: str, seed: int) -> list[str]:
    if len(text) < 2:
        return [text]
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(0, 12))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)] or [""]


def storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def summary(result):  # type: ignore[no-untyped-def]
    reply = result.reply.model_dump(mode="json") if result.reply is not None else None
    return (result.ok, result.error_kind, result.text, result.ids, reply)


def check(protocol: str, text: str, seed: int) -> None:
    whole = parse(protocol, [text])
    assert summary(parse(protocol, chunked(text, seed))) == summary(whole)
    if whole.ok:
        assert set(whole.ids) <= set(GROUNDED)
        assert storable(whole.text)
        assert storable(json.dumps(whole.reply.model_dump(mode="json"), ensure_ascii=False))


def _property(protocol: str):  # type: ignore[no-untyped-def]
    @settings(
        max_examples=EXAMPLES,
        deadline=timedelta(milliseconds=500),  # each answer in bounded time, however hostile
        suppress_health_check=[HealthCheck.too_slow],
        derandomize=True,
    )
    @given(data=st.data(), seed=st.integers(0, 2**32))
    def test(data: st.DataObject, seed: int) -> None:
        draw = data.draw
        check(protocol, written(draw(reply_json()), protocol, draw), seed)

    return test


test_json_answers = _property("json")
test_delimited_answers = _property("delimited")
test_ndjson_answers = _property("ndjson")


def test_the_reproducers_from_the_fault_matrix() -> None:
    hostile = [
        '{"intro": "Here\\\'s a red"',  # invalid escape, cut short
        json.dumps({"intro": "Cheers \ud83c\udf77"}, ensure_ascii=True),
        "[" * 100_000,
        "Text\n---\n" + "[" * 100_000,
        '{"response_type": "informational", "intro": "a\\ud83c", "wines": [], "closing": "",'
        ' "guard": null}',
        '{"response_type": "informational", "intro": "a\\u0000b", "wines": [], "closing": "",'
        ' "guard": null}',
    ]
    for protocol in PROTOCOLS:
        for text in hostile:
            check(protocol, text, seed=7)
    nul = parse("json", [hostile[-1]])
    assert nul.ok and nul.reply.intro == "ab"  # the NUL never reaches the database
