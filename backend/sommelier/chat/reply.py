"""The reply schema and its validation: schema, then the rules of chat/rules.py, in order.

Facts on a card (name, producer, region, grapes, price, rating) come from the catalog row, never
from model text: the model chooses `wine_id` and, among the reasons the row supports, which to
give (said from data by chat/reasons.py); its own words are one sentence per wine, checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from rapidfuzz import fuzz

from sommelier.agent.output import AnswerContext, ErrorKind, Facts, ParseResult
from sommelier.agent.text import ABBREVIATIONS, sentences
from sommelier.catalog.lexicon import fold
from sommelier.catalog.reading import Names, Reading, words_for
from sommelier.catalog.tool_arguments import NAMES, READING
from sommelier.catalog.tools import CLOSEST_HEAD, MATCH_HEAD, NOTHING_HEAD, PICKS_HEAD
from sommelier.chat import prose, reasons, rules
from sommelier.chat.answer import (
    ASKED_WINES,
    FIELDS,
    MAX_CLOSING,
    MAX_INTRO,
    MAX_WHY,
    MAX_WINES,
    NO_WINES,
    Guard,
    Reply,
    ResponseType,
    WinePick,
    accepted,
    is_empty,
    reply_json_schema,
    said_from_data,
)
from sommelier.chat.gist import own_evidence
from sommelier.chat.guard import (
    INJECTION,
    OTHER_SUBJECT,
    RULES_ATTEMPT,
    THANKS,
    fixed_reply,
    leaks,
    refusal,
    said_by_the_bot,
    steer,
    thanks,
    wine_asked,
)
from sommelier.chat.labels import found_intro
from sommelier.chat.prose import ProseContext, native_wine, propers_of, without, without_foreign
from sommelier.chat.rules import Problem

M = TypeVar("M", bound=BaseModel)


BLANK = Reply(response_type=ResponseType.informational, intro="", wines=[], closing="", guard=None)


class ReplySpec:
    """The AnswerSpec of the sommelier's reply. `own_sentence`: whether each wine may carry a
    sentence of the model's own after its reasons (SOMMELIER_WINE_SENTENCE)."""

    name = "sommelier_reply"

    def __init__(self, own_sentence: bool = True) -> None:
        self.own_sentence = own_sentence
        self.rules = RULES if own_sentence else (_rule("own_sentence_out", "drop", no_why), *RULES)

    def json_schema(
        self, grounded: Sequence[str] | None = None, facts: Facts | None = None
    ) -> dict[str, Any]:
        return reply_json_schema(grounded, facts, why=MAX_WHY if self.own_sentence else 0)

    def describe(self) -> str:
        return FIELDS

    def constraint(self, grounded: Sequence[str]) -> str:
        if grounded:
            return f"wine_id must be one of: {', '.join(grounded)}."
        return NO_WINES

    def given(self, data: Any) -> ParseResult[Reply]:
        try:
            return accepted(Reply.model_validate(data), raw="")
        except ValidationError as exc:
            return ParseResult.failure(ErrorKind.schema, str(exc.errors()[:1]), "")

    def fixed(self, context: AnswerContext) -> ParseResult[Reply] | None:
        """The plan's word on the message (another subject, thanks, an attempt on the rules),
        or thanks in the person's words, as its fixed, translated text: `planned_said` on a
        reply with nothing in it, before any model writes one."""
        said = planned_said(BLANK, context)
        return accepted(said, raw="") if said is not None else None

    def preface(self, context: AnswerContext) -> str:
        """A recommendation's intro, said from data (chat/reasons.py) as the service will say
        it, before the model writes: the grammar leaves the model none to write."""
        reading, names = context.turn.get(READING), context.turn.get(NAMES)
        if not said_from_data(context.grounded, context.facts) or reading is None or not names:
            return ""
        asked = reasons.searched(context.tool_results)
        return reasons.opening(asked, reading.language, names.currency)

    def validate(self, data: Any, context: AnswerContext, raw: str) -> ParseResult[Reply]:
        try:
            reply = Reply.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
                for e in exc.errors()[:6]
            )
            return ParseResult.failure(ErrorKind.schema, problems, raw)
        if reply.wines and is_empty(reply.intro) and (opening := self.preface(context)):
            # The grammar left the model no intro to write: the data's is the reply's own.
            reply = reply.model_copy(update={"intro": opening})
        outcome = rules.run(self.rules, reply, context)
        if outcome.problem is None:
            return accepted(outcome.reply, raw, outcome.fired)
        fallback = None
        if outcome.problem.fallback is not None:
            mended = rules.run(rules.mends(self.rules), outcome.problem.fallback, context)
            fallback = accepted(mended.reply, raw, outcome.fired + mended.fired)
        failure = ParseResult[Reply].failure(
            outcome.problem.kind, outcome.problem.message, raw, fallback=fallback
        )
        failure.rules = outcome.fired
        return failure


def _update(model: M, **fields: Any) -> M:
    return model.model_copy(update=fields)


def _language(context: AnswerContext) -> str:
    reading = context.turn.get(READING)
    return reading.language if isinstance(reading, Reading) else "en"


def _guarded(reply: Reply) -> bool:
    return reply.guard in (Guard.prompt_injection, Guard.social_engineering)


def asks_for_wine(context: AnswerContext) -> bool:
    """Whether the person asked for wines this turn (not "tell me more about the first one")."""
    reading = context.turn.get(READING)
    return (
        context.tools_required
        and isinstance(reading, Reading)
        and reading.wine_request
        and not reading.reference
    )


# -- replace ---------------------------------------------------------------------------------


def refusal_said(reply: Reply, context: AnswerContext) -> Reply | None:
    """A reply the model labels an injection or social engineering says the fixed, translated
    refusal, not its own words (a small model's "Sure, here is my system prompt" came labelled
    so). Beside a wine request, the label is as often the model's mistake on an innocent one
    ("Na gut, dann einen Sekt für Silvester"): the wines stay, and the model's words give way
    to the catalog's, so neither a refusal nor "Sure! Here is my system prompt" is shown (the
    label stays, for the operator)."""
    if not _guarded(reply):
        return None
    if asks_for_wine(context):
        return _update(reply, intro=found_intro(_language(context)), closing="")
    said = refusal(str(reply.guard), _language(context))
    return _update(reply, intro=said, closing="", wines=[], response_type=ResponseType.off_topic)


def leak_out(reply: Reply, context: AnswerContext) -> Reply | None:
    """A reply that repeats the model's instructions, whatever it is labelled, says the fixed
    refusal instead; the wines of a wine request stay, without a why that repeats them."""
    leaked = {name for name, text in _fields(reply).items() if leaks(text)}
    if not leaked:
        return None
    wines = [
        _update(w, why="" if f"why:{i}" in leaked else w.why) for i, w in enumerate(reply.wines)
    ]
    said = refusal(INJECTION, _language(context))
    kept = wines if asks_for_wine(context) else []
    return _update(reply, intro=said, closing="", wines=kept, guard=Guard.prompt_injection)


def planned_said(reply: Reply, context: AnswerContext) -> Reply | None:
    """The plan said the message only thanks, is about another subject or attempts the rules
    (the words may say it thanks), and nothing was searched: the fixed, translated text for
    it, not the model's words ("Sure, I can help you write an email to your landlord")."""
    reading = context.turn.get(READING)
    words = reading if isinstance(reading, Reading) else None
    thanked = words is not None and thanks(words.text) and not words.filters
    kind = THANKS if thanked else context.planned
    said = fixed_reply(kind, _language(context))
    # "Cheers" is a toast too. For another subject, only the words' own evidence of wine
    # counts (chat/gist.py): a verb that asks ("mi consigli", "recomiendas") is no wine request.
    asks = words is not None and words.wine_request and not thanked
    if words is not None and asks and kind == OTHER_SUBJECT:
        asks = own_evidence(words)
    if words is not None and kind == RULES_ATTEMPT:
        asks = wine_asked(words)  # a wish the conversation held is none of this message's
    if said is None or reply.wines or context.tools_used or asks:
        return None  # (grounded holds the wines shown before: they may be named again)
    shape = ResponseType.informational if kind == THANKS else ResponseType.off_topic
    # labelled as the model is told to label them: a steer away is the off-topic guard
    guard = {RULES_ATTEMPT: Guard.prompt_injection, OTHER_SUBJECT: Guard.off_topic}.get(kind or "")
    return _update(reply, response_type=shape, intro=said, closing="", guard=guard)


def off_topic_said(reply: Reply, context: AnswerContext) -> Reply | None:
    """A reply the model labels off-topic, in a turn that found no wine and whose words name
    none, says the fixed, translated steer back to wine rather than its own words."""
    if reply.response_type != ResponseType.off_topic or reply.wines or context.tools_used:
        return None
    if _guarded(reply):
        return None  # refused, in refusal_said's words
    reading = context.turn.get(READING)
    if isinstance(reading, Reading) and (reading.about_wine or reading.wine_words):
        return None
    return _update(reply, intro=steer(_language(context)), closing="", guard=None)


def wines_from_search(reply: Reply, context: AnswerContext) -> Reply | None:
    """The search found wines, and the reply declines, or recommends none, or answers a wine
    request without one (a shrug or a question back in any language): the search's best, whose
    reasons are said from data, rather than a repair. A question back stands when the person
    named nothing to go on ("recommend me a wine")."""
    if (_guarded(reply) and not asks_for_wine(context)) or not context.grounded:
        return None
    declined = context.tools_required and _declines(f"{reply.intro} {reply.closing}")
    recommends = reply.response_type == ResponseType.recommendation
    if reply.wines and not declined:
        return None
    if not (declined or recommends or _wineless(reply, context)):
        return None
    best = [i for i in context.facts if i in context.grounded][:ASKED_WINES]
    picks = [w for w in reply.wines if w.wine_id in context.grounded]
    picks = picks or [WinePick(wine_id=i, why="") for i in best]
    if not picks:
        return None
    # An intro written above no pick speaks of that empty choice ("non ho alcun vino che
    # soddisfi questi criteri" above the search's two reds); only an answer's words stand.
    unpicked = recommends and not reply.wines
    intro = found_intro(_language(context)) if declined or unpicked else reply.intro
    return _update(
        reply,
        response_type=ResponseType.recommendation,
        intro=intro,
        closing="" if declined else reply.closing,
        wines=picks,
        guard=None,
    )


def _wineless(reply: Reply, context: AnswerContext) -> bool:
    """No card for a wine request that named something to go on, here or earlier."""
    if reply.wines or not asks_for_wine(context):
        return False
    reading = context.turn[READING]
    assert isinstance(reading, Reading)  # asks_for_wine checked it
    if not (reading.request or reading.follow_up or reading.price or _wished(reading)):
        return False
    wishes = (reading.filters, reading.excluded, reading.price, reading.earlier_subject)
    named = reading.follow_up or any(wishes)
    return named or reply.response_type != ResponseType.clarification


def _wished(reading: Reading) -> bool:
    """A wish named without words of asking ("un bianco fresco per il pesce"); a statement of
    taste with no dish and no question mark ("I love Barolo.") may be answered in words."""
    if not any(
        k in reading.filters
        for k in ("type", "types", "food", "grape", "region", "sweetness", "body")
    ):
        return False
    statement = reading.likes or reading.dislikes
    return not statement or "food" in reading.filters or "?" in reading.text


def plain_intro(reply: Reply, context: AnswerContext) -> Reply | None:
    """Cards whose intro the rules left empty get a plain line above them."""
    if reply.wines and is_empty(reply.intro):
        return _update(reply, intro=found_intro(_language(context)))
    return None


# -- mend ------------------------------------------------------------------------------------


def _each(reply: Reply, mend: Callable[[str], str], whys: bool = True) -> Reply:
    """The reply with `mend` applied to its intro, its closing and (with `whys`) each why."""
    wines = [_update(w, why=mend(w.why)) for w in reply.wines] if whys else reply.wines
    return _update(reply, intro=mend(reply.intro), closing=mend(reply.closing), wines=wines)


def one_pick_each(reply: Reply, context: AnswerContext) -> Reply | None:
    """A wine named twice is shown once; more than MAX_WINES are not shown."""
    picks: list[WinePick] = []
    for pick in reply.wines:
        if pick.wine_id not in {p.wine_id for p in picks}:
            picks.append(pick)
    return _update(reply, wines=picks[:MAX_WINES])


def supported_reasons(reply: Reply, context: AnswerContext) -> Reply | None:
    """A reason a wine's row does not support is not said (a server that ignores the grammar
    lets the model choose any)."""
    wines = []
    for pick in reply.wines:
        allowed = context.facts.get(pick.wine_id, {}).get("reasons") or []
        wines.append(pick if pick.reason in allowed else _update(pick, reason=None))
    return _update(reply, wines=wines)


def unknown_wines(reply: Reply, context: AnswerContext) -> Problem | None:
    unknown = [p.wine_id for p in reply.wines if p.wine_id not in context.grounded]
    if not unknown:
        return None
    return Problem(
        f"wine_id {', '.join(unknown)} did not appear in a tool result of this turn; "
        "recommend only wines returned by search_wines or get_wine",
        ErrorKind.grounding,
    )


def ids_named(reply: Reply, context: AnswerContext) -> Reply:
    """Ids of this turn's wines written into the text become the wines' names (small models
    copy the tool lines' ids); a sentence with an id no name is known for is left out."""
    labels = context.labels

    def mend(text: str) -> str:
        for wine_id, name in labels.items():
            if name and wine_id.casefold() in text.casefold():
                text = _id_to_name(text, wine_id, name)
        folded = [
            s
            for s in sentences(text)
            if any(i.casefold() in s.casefold() for i in context.grounded)
        ]
        return without(text, folded)

    return _each(reply, mend)


def _id_to_name(text: str, wine_id: str, name: str) -> str:
    literal = name.replace("\\", "\\\\")  # a replacement string, not a pattern
    own = rf"(?i:(?:\bid\s*[:#]?\s*)?(?<![\w-]){re.escape(wine_id)}(?![\w-]))"
    text = re.sub(own, literal, text)
    # "Name (Name)", "Name: Name", "Name - Name": the id stood beside the name.
    same = re.escape(name)
    return re.sub(rf"{same}\s*(?:[(\[]\s*{same}\s*[)\]]|[:,–—-]?\s*{same})", literal, text)


def relabelled(reply: Reply, context: AnswerContext) -> Reply | None:
    """Labels small models pick loosely: a "clarification" that asks nothing, and a
    "recommendation" without wines in a turn that searched nothing, are answers."""
    asks = "?" in reply.intro + reply.closing
    wineless = reply.response_type == ResponseType.recommendation and not reply.wines
    if (reply.response_type == ResponseType.clarification and not asks) or (
        wineless and not context.grounded
    ):
        return _update(reply, response_type=ResponseType.informational)
    return None


def off_topic_with_wines(reply: Reply, context: AnswerContext) -> Reply | None:
    """Wines from a search are no off-topic answer: the 1.5B model labelled "which red for
    lasagne?" so, and the cards came with no reasons and no closing (unseen56)."""
    if reply.guard != Guard.off_topic or not reply.wines or not context.tools_used:
        return None
    return _update(reply, guard=None, response_type=ResponseType.recommendation)


def in_own_words(reply: Reply, context: AnswerContext) -> Reply:
    """The English word "wine" in the person's language (prose.native_wine)."""
    propers = [p for facts in context.facts.values() for p in propers_of(facts)]
    return _each(reply, lambda text: native_wine(text, _language(context), propers))


def foreign_letters_out(reply: Reply, context: AnswerContext) -> Reply | None:
    """Letters of a script the person's language does not use ("Ein Rotwein mit 结构")."""
    language = _language(context)
    if not any(prose.foreign_letters(t, language) for t in _fields(reply).values()):
        return None
    return _each(reply, lambda text: without_foreign(text, language))


# -- cap -------------------------------------------------------------------------------------

# A field that ends so is whole, however long; one near its cap that does not may have been
# stopped by the grammar, below the cap too: a server counts the cap in its own units, and the
# Russian and Portuguese whys it cut mid-word were 80 % of the cap.
WHOLE_END = re.compile(r"[.!?…:][\"'»”)]*$")
NEAR_CAP = 0.75
CLAUSE = re.compile(r"[,;:–—]\s")
# "Dr. Loosen", "St. Emilion" or "ca. 15 Euro" goes on: a why cut back to "… by Dr." was shown.
SENTENCE_END = re.compile("".join(rf"(?<!\b{a})" for a in ABBREVIATIONS) + r"[.!?…](?=\s)")
# A word or two after the last sentence, with no end of its own ("… for a birthday. The").
FRAGMENT = re.compile(r"(?<=[.!?…])\s+\S+(?:\s+\S+)?\s*$")
# Where no grammar enforces the caps, a field past CEILING times its cap is cut like a capped
# one, so a reply stays within a few Telegram messages whatever the model writes.
CEILING = 4


def _trim(text: str, limit: int) -> tuple[str, bool]:
    """A field a grammar stopped at its limit, mended: back to its last whole sentence, else
    to its last whole clause with a full stop, else nothing (never "…" mid-phrase). The flag
    says the field was cut."""
    if len(text) > limit * CEILING:
        return _trim(text[: limit * CEILING], limit * CEILING)[0], True
    if len(text) < limit * NEAR_CAP or WHOLE_END.search(text.strip()):
        return text, False
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    if ends and ends[-1] > limit // 3:
        return text[: ends[-1]], True
    clauses = [m.start() for m in CLAUSE.finditer(text)]
    if clauses and clauses[-1] > limit * 3 // 10:
        return text[: clauses[-1]].rstrip() + ".", True
    return "", True


def within_caps(reply: Reply, context: AnswerContext) -> Reply:
    """A field cut at its limit ends at its last sentence or clause, or is left out; `capped`
    makes the next turn ask for shorter text."""
    wines, cut = [], False
    for wine in reply.wines:
        why, broken = _trim(wine.why, MAX_WHY)
        wines.append(_update(wine, why=why))
        cut |= broken
    intro, broken_intro = _trim(reply.intro, MAX_INTRO)
    closing, broken_closing = _trim(reply.closing, MAX_CLOSING)
    capped = cut or broken_intro or broken_closing or reply.capped
    return _update(reply, intro=intro, closing=closing, wines=wines, capped=capped)


def unfinished_out(reply: Reply, context: AnswerContext) -> Reply:
    """A word or two begun after the last whole sentence and never ended is left out."""

    def mend(text: str) -> str:
        return text if WHOLE_END.search(text.strip()) else FRAGMENT.sub("", text.rstrip())

    return _each(reply, mend, whys=False)


# -- markup ----------------------------------------------------------------------------------

# JSON (a tool call, the answer itself), a field name or the delimiter written into the text;
# a catalog line copied as a table row, a search result's head, a "Wine 2:" label.
_MARKUP = re.compile(
    r'\{\s*"|(?<=\S)[ \t]+---|```|\[?\bI suggested:'
    r'|"(?:intro|wines|closing|guard|why|reason)"\s*:|\b(?:response_type|wine_id)\b'
    r"|\bthe (?:intro|closing)\s*:"
    rf"|\bwine\s*#?\d\s*:|{re.escape(MATCH_HEAD)}|{re.escape(PICKS_HEAD)}"
    rf"|{re.escape(NOTHING_HEAD)}\s[^\n]*?;\s*{re.escape(CLOSEST_HEAD)}|{re.escape(NO_WINES)}",
    re.IGNORECASE,
)
# A line that is: a card's field written out ("Wine ID: …"), a table row, a note of the
# prompt's in brackets ("[no tool is needed]"), or a list number alone.
_ECHOED_LINE = re.compile(
    r"^\s*(?:wine[\s_-]*id|why|wines?)\s*:| \| .* \| |^\s*\[[^\[\]]*\]\s*$|^\s*\d+[.)]?\s*$",
    re.IGNORECASE,
)
# A field's or a speaker's name opening a line ("intro: …", "Sommelier: …").
_LABEL = re.compile(
    r"^\s*(?:[\"']?intro[\"']?\s*[:=]|\w*melier\s*:|assistant\s*:)\s*", re.IGNORECASE
)
# A bracket that opens a line and never closes ("[intro: Here are…"): it goes, the prose stays.
_OPEN_BRACKET = re.compile(r"^\s*\[(?=[^\]]*$)")
STUB_WORDS = 3  # fewer words after a sentence's end, before markup, are a stub


def unmarked(reply: Reply, context: AnswerContext) -> Reply:
    """JSON, field names, the delimiter or a search result's lines written into the intro or
    closing (small models echo the format and copy the tool's English lines): cut out, keeping
    the sentences before it on each line. A repair of this often fails the same way."""
    return _each(reply, _unmarked, whys=False)


def _unmarked(text: str) -> str:
    lines, cut = [], False
    for line in text.split("\n"):
        kept = "" if _ECHOED_LINE.search(line) else _LABEL.sub("", _OPEN_BRACKET.sub("", line))
        markup = _MARKUP.search(kept)
        kept = _before(kept, markup.start()) if markup else kept
        cut |= kept != line
        if kept.strip() or kept == line:  # blank lines between paragraphs stay
            lines.append(kept)
    return "\n".join(lines).strip() if cut else text


def _before(line: str, cut: int) -> str:
    """The line before markup, less a stub of a sentence the markup began."""
    kept = line[:cut].rstrip()
    ends = [m.end() for m in re.finditer(r"[.!?…:]", kept)]
    start = ends[-1] if ends else 0
    return kept if len(kept[start:].split()) >= STUB_WORDS else kept[:start].rstrip()


# -- drop ------------------------------------------------------------------------------------


def _fields(reply: Reply, whys: bool = True) -> dict[str, str]:
    fields = {"intro": reply.intro, "closing": reply.closing}
    if whys:
        fields |= {f"why:{i}": w.why for i, w in enumerate(reply.wines)}
    return fields


def _drop(reply: Reply, found: Mapping[str, Sequence[str]]) -> Reply:
    """The reply less the given sentences of each field."""
    if not any(found.values()):
        return reply
    wines = [
        _update(w, why=without(w.why, found.get(f"why:{i}", []))) for i, w in enumerate(reply.wines)
    ]
    intro = without(reply.intro, found.get("intro", []))
    return _update(
        reply, intro=intro, closing=without(reply.closing, found.get("closing", [])), wines=wines
    )


def _dropping(
    test: Callable[[str, AnswerContext], bool], whys: bool = False
) -> Callable[[Reply, AnswerContext], Reply]:
    """A rule that leaves out each sentence `test` finds."""

    def check(reply: Reply, context: AnswerContext) -> Reply:
        fields = _fields(reply, whys)
        return _drop(
            reply, {k: [s for s in sentences(v) if test(s, context)] for k, v in fields.items()}
        )

    return check


MIN_QUOTE = 4  # words: fewer may be a phrase any answer shares with the message
# A sentence this alike (rapidfuzz's ratio, in %) to the message or one of its sentences says
# it again in other words ("Olá, eu preciso de um vinho para um jantar de frutos do mar" for
# "Olá! Preciso de um vinho para um jantar de frutos do mar": 87); seven words or more.
PARAPHRASE, MIN_PARAPHRASE = 85, 7


def echoes(text: str, request: str) -> bool:
    """Whether `text` is nothing but the person's message (of three words or more)."""
    return len(request.split()) >= 3 and _normal(text) == _normal(request)


def quotes(text: str, message: str) -> bool:
    """Whether `text` is the person's message, or a run of four words or more of it."""
    said = _normal(text)
    return echoes(text, message) or (
        len(said.split()) >= MIN_QUOTE and f" {said} " in f" {_normal(message)} "
    )


def restates(text: str, message: str) -> bool:
    """Whether `text` quotes the message, or says it again in a few other words."""
    if quotes(text, message):
        return True
    said = _normal(text)
    heard = [_normal(part) for part in (message, *sentences(message))]
    return any(
        len(part.split()) >= MIN_PARAPHRASE and fuzz.ratio(said, part) >= PARAPHRASE
        for part in heard
    )


def _messages(context: AnswerContext) -> tuple[str, ...]:
    """The person's message and the ones just before it."""
    reading = context.turn.get(READING)
    earlier = reading.earlier_texts if isinstance(reading, Reading) else ()
    return (context.request, *earlier)


def echoes_out(reply: Reply, context: AnswerContext) -> Reply | None:
    """Above cards, sentences that say again the person's message (this one or one before it,
    even in other words) or four words or more of the previous reply are left out: the cards
    answer. Without cards, only the message word for word or quoted whole, and only beside an
    answer ("No, no se puede cocinar con un vino…" answers its question in other words)."""
    messages, asked = _messages(context), _normal(context.request)
    previous = context.previous_answer or ""

    own = {_normal(s) for s in sentences(context.request) if len(s.split()) >= 3}

    def said(sentence: str) -> bool:
        if echoes(sentence, context.request) or _normal(sentence) in own:
            return True
        return bool(reply.wines) and (
            any(restates(sentence, m) for m in messages)
            or bool(previous and quotes(sentence, previous))
        )

    mended = reply
    if len(asked.split()) >= MIN_QUOTE:  # a line that quotes the message whole goes too

        def unquoted(text: str) -> str:  # only beside other lines, that say something else
            kept = [x for x in text.split("\n") if asked not in _normal(x)]
            return "\n".join(kept).strip() if "".join(kept).strip() else text

        mended = _update(reply, intro=unquoted(reply.intro), closing=unquoted(reply.closing))
    mended = _dropping(lambda s, _: said(s))(mended, context)
    both = f"{reply.intro} {reply.closing}"  # a message quoted across the two fields
    if reply.wines and any(restates(both, m) for m in messages):
        mended = _update(mended, intro="", closing="")
    return None if not reply.wines and is_empty(mended.intro) else mended


def repeated_out(reply: Reply, context: AnswerContext) -> Reply:
    """A sentence the reply said already is left out (small models loop, or close with the
    question their intro asked)."""
    seen: set[str] = set()
    found: dict[str, list[str]] = {}
    for where, text in _fields(reply).items():
        for sentence in sentences(text):
            key = _normal(sentence)
            if len(key.split()) > 1 and key in seen:
                found.setdefault(where, []).append(sentence)
            seen.add(key)
    return _drop(reply, found)


def _marked(marker: str) -> Callable[[str, AnswerContext], bool]:
    """A test for sentences with one of the lexicons' `marker` phrases, in the person's
    language."""

    def test(sentence: str, context: AnswerContext) -> bool:
        phrases = words_for(_language(context), Names()).markers.get(marker)
        return phrases is not None and bool(phrases.pattern.search(fold(sentence)))

    return test


def declines_out(reply: Reply, context: AnswerContext) -> Reply | None:
    """Above cards, a sentence saying nothing was found or understood is false: the cards
    answer."""
    if not reply.wines:
        return None
    marked = _marked("declines")

    def declines(sentence: str, context: AnswerContext) -> bool:
        return marked(sentence, context) or _declines(sentence)

    mended = _dropping(declines, whys=True)(reply, context)
    if any(declines(s, context) for s in sentences(reply.intro)):
        mended = _update(mended, intro="")  # the rest of it framed a reply without wines
    return mended


# -- prose: facts, language ------------------------------------------------------------------


def _prose_context(context: AnswerContext) -> ProseContext:
    names = context.turn.get(NAMES)
    return ProseContext.of(_language(context), names if isinstance(names, Names) else Names())


def copies_out(reply: Reply, context: AnswerContext) -> Reply:
    """Sentences that copy a search result's line or a catalog description in another
    language: the card says it already."""
    return _drop(
        reply, prose.copies(_fields(reply), _picks(reply), context.facts, _language(context))
    )


def mixed_scripts_out(reply: Reply, context: AnswerContext) -> Reply:
    return _drop(reply, prose.mixed_scripts(_fields(reply)))


def other_language_out(reply: Reply, context: AnswerContext) -> Reply | None:
    """In a reply that is in the person's language, an English sentence is left out."""
    language = _language(context)
    if language == "en" or _bots_own(reply, context) or _language_problem(reply, context):
        return None
    return _drop(reply, prose.foreign_sentences(_fields(reply), language, _propers(context), "en"))


def false_facts_out(reply: Reply, context: AnswerContext) -> Reply:
    """A sentence that states a grape, place, colour, sweetness, vintage, price, rating or
    producer its wine's row (or, in the intro and closing, no wine shown) contradicts."""
    return _drop(
        reply,
        prose.false_facts(_fields(reply), _picks(reply), context.facts, _prose_context(context)),
    )


def another_wines_why_out(reply: Reply, context: AnswerContext) -> Reply:
    """A why that names another wine of the results describes that wine, not its card's."""
    names = {i: _normal(n) for i, n in context.labels.items() if n}
    wines = []
    for pick in reply.wines:
        why = _normal(pick.why)
        own = names.get(pick.wine_id, "\0") in why
        other = any(i != pick.wine_id and n in why for i, n in names.items())
        wines.append(_update(pick, why="") if other and not own else pick)
    return _update(reply, wines=wines)


def _picks(reply: Reply) -> list[str]:
    return [w.wine_id for w in reply.wines]


def _propers(context: AnswerContext) -> list[str]:
    return [p for facts in context.facts.values() for p in propers_of(facts)]


def _bots_own(reply: Reply, context: AnswerContext) -> bool:
    """A fixed text of the bot's: English where the language has no texts of its own."""
    return not reply.wines and reply.intro in said_by_the_bot(_language(context))


def _language_problem(reply: Reply, context: AnswerContext) -> str | None:
    if _bots_own(reply, context):
        return None
    texts = list(_fields(reply).values())
    return prose.language_problem(texts, _language(context), _propers(context))


# -- send back -------------------------------------------------------------------------------


def nothing_said(reply: Reply, context: AnswerContext) -> Problem | None:
    texts = [reply.intro, reply.closing, *(w.why for w in reply.wines)]
    if all(is_empty(t) for t in texts) and not reply.wines:
        return Problem("intro, closing and every why are empty; write the answer for the person")
    return None


def shape_broken(reply: Reply, context: AnswerContext) -> Problem | None:
    if reply.response_type == ResponseType.recommendation and not reply.wines:
        return Problem("a recommendation needs at least one wine from the tool results")
    if reply.response_type == ResponseType.off_topic and is_empty(reply.intro):
        return Problem("an off_topic reply needs an intro that politely steers back to wine")
    return None


def wrong_language(reply: Reply, context: AnswerContext) -> Problem | None:
    problem = _language_problem(reply, context)
    if problem is None:
        return None
    found = prose.foreign_sentences(_fields(reply), _language(context), _propers(context))
    return Problem(problem, fallback=_drop(reply, found))


# "I'm sorry, but I can't assist with that" to a wine request: a refusal nobody asked for.
_CANT = re.compile(r"\b(?:can(?:not|'t)|unable to|not able to)\s+(?:assist|help)\b", re.IGNORECASE)
# "Please search the catalog", "you can check our list", "I can't browse the catalog".
_PUNT = re.compile(
    r"\b(search|check|look\s+(?:it\s+)?up|look\s+through|browse|consult|explore)\b[^.?!]{0,40}"
    r"\b(catalog(?:ue)?|database|inventory|selection|wine\s+list|list|website|store|shop)\b"
    r"|\b(?:can(?:not|'t)|unable\s+to|don'?t\s+have\s+access\s+to)\s+"
    r"(?:search|access|browse)\b",
    re.IGNORECASE,
)
_YOU = re.compile(r"\b(you|please|feel free)\b", re.IGNORECASE)


def _punts(sentence: str) -> list[bool]:
    """For each mention of searching the catalog: whether it hands the search to the person
    ("Can you search the catalog?") rather than promising to do it ("Let me check")."""
    return [
        match.group(1) is None or bool(_YOU.search(sentence[: match.end()]))
        for match in _PUNT.finditer(sentence)
    ]


def _declines(text: str) -> bool:
    """ "I can't help with that", or the search handed to the person (a promise is not)."""
    return bool(_CANT.search(text)) or any(any(_punts(s)) for s in sentences(text))


def _normal(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()


def no_why(reply: Reply, _: AnswerContext) -> Reply:
    """With the wines' reasons said from data alone, a sentence a server let through its
    grammar (or one that takes none) is not shown."""
    picks = [_update(w, why="") for w in reply.wines]
    return _update(reply, wines=picks) if any(w.why for w in reply.wines) else reply


def _rule(name: str, action: rules.Action, check: Callable[..., Any]) -> rules.Rule:
    return rules.Rule(name, action, check)


# In order: the model's choices first, then its format, what it said again, whether it
# answered, and last the facts and language of what is left.
RULES: tuple[rules.Rule, ...] = (
    _rule("leak_out", "replace", leak_out),
    _rule("refusal_said", "replace", refusal_said),
    _rule("planned_said", "replace", planned_said),
    _rule("off_topic_said", "replace", off_topic_said),
    _rule("one_pick_each", "drop", one_pick_each),
    _rule("unknown_wine", "send_back", unknown_wines),
    _rule("supported_reasons", "drop", supported_reasons),
    _rule("markup_out", "mend", unmarked),
    _rule("ids_named", "mend", ids_named),
    _rule("within_caps", "mend", within_caps),
    _rule("unfinished_out", "drop", unfinished_out),
    _rule("relabelled", "mend", relabelled),
    _rule("off_topic_with_wines", "mend", off_topic_with_wines),
    _rule("nothing_said", "send_back", nothing_said),
    _rule("wines_from_search", "replace", wines_from_search),
    _rule("echoes_out", "drop", echoes_out),
    _rule("repeated_out", "drop", repeated_out),
    _rule("declines_out", "drop", declines_out),
    _rule("another_wines_why_out", "drop", another_wines_why_out),
    _rule("plain_intro", "replace", plain_intro),
    _rule("shape_broken", "send_back", shape_broken),
    _rule("in_own_words", "mend", in_own_words),
    _rule("foreign_letters_out", "mend", foreign_letters_out),
    _rule("copies_out", "drop", copies_out),
    _rule("mixed_scripts_out", "drop", mixed_scripts_out),
    _rule("other_language_out", "drop", other_language_out),
    _rule("false_facts_out", "drop", false_facts_out),
    _rule("wrong_language", "send_back", wrong_language),
    _rule("plain_intro_again", "replace", plain_intro),
)
