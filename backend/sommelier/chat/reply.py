"""The reply schema and its validation: schema, semantics, grounding.

Facts on a card (name, producer, region, grapes, price, rating) come from the catalog row, never
from model text: the model only chooses `wine_id` and says `why`.

Not every valid JSON is an answer. A reply that asks the person to search the catalog
themselves, repeats the previous reply, or is empty is rejected with feedback like any other
invalid answer (small models fall back on these when they cannot find what to say).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rapidfuzz import fuzz

from sommelier.agent.output import AnswerContext, ErrorKind, ParseResult
from sommelier.catalog.lexicon import fold
from sommelier.catalog.reading import Names, Reading, words_for
from sommelier.catalog.tool_arguments import NAMES, READING
from sommelier.catalog.tools import CLOSEST_HEAD, MATCH_HEAD, NOTHING_HEAD, PICKS_HEAD, PREVIOUS
from sommelier.chat.guard import refusal
from sommelier.chat.labels import found_intro, offer_line
from sommelier.chat.prose import (
    SENTENCE,
    ProseContext,
    findings,
    native_wine,
    propers_of,
    without,
    without_foreign,
)

MAX_WINES = 3  # accepted; the answer format asks for at most ASKED_WINES
# Each wine costs a small local model about 3 s of writing: the format asks for two.
ASKED_WINES = 2
# Enforced where the server takes a schema or grammar: a small model otherwise runs on, and
# every token costs it time (on 2 cores about 0.05 s; a German or Russian word is more tokens
# than an English one). Yet a small model writes to the cap whatever it is told: at why 80
# and closing 60, 12 of 28 English closings and a fifth of the whys were cut to nothing, and
# the same sets ran no slower at 120 and 100 (fewer repairs). A field the grammar stops
# mid-sentence is mended at once (trimmed), and the next turn asks for shorter text.
MAX_INTRO, MAX_WHY, MAX_CLOSING = 120, 120, 100
CAPPED_NOTE = "Your last answer ran over its length limits: keep every field shorter."
# The answer format's own rule for a turn without wines, about the field only: "No wine was
# found in this turn" came back translated as the answer to general questions ("non ho
# trovato nessun vino in questo turno" for "how strong is a prosecco?"). Small models copy
# it out, so it is cut from the text like the format's other words.
NO_WINES = "Set wines to []."
PLACEHOLDERS = frozenset({"", "none", "null", "n/a", "na", "-", "...", "…", "tbd", "todo"})


class ResponseType(StrEnum):
    recommendation = "recommendation"
    informational = "informational"
    clarification = "clarification"
    off_topic = "off_topic"


class Guard(StrEnum):
    off_topic = "off_topic"
    prompt_injection = "prompt_injection"
    social_engineering = "social_engineering"


_LIST_NUMBER = re.compile(r"^\d+[.)]\s+")


class WinePick(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wine_id: str = Field(description="The id of a wine from this turn's tool results.")
    why: str = Field(description="One or two sentences: why this wine fits the request.")

    @field_validator("why")
    @classmethod
    def _as_a_sentence(cls, why: str) -> str:
        """Opens like a sentence: without the list number the model put before it ("1. it has
        a medium body…": the cards are numbered already), with a capital."""
        why = _LIST_NUMBER.sub("", why.lstrip())
        return why[:1].upper() + why[1:]


class Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    response_type: ResponseType
    intro: str = Field(description="The opening text shown to the person.")
    wines: list[WinePick] = Field(description="Up to 3 wines; empty unless recommending.")
    closing: str = Field(description="A closing line, usually a short follow-up question.")
    guard: Guard | None = Field(description="null, or why the request was declined.")
    # Set by validation, never by the model (not in the answer's schema): a field ran over its
    # cap, so the next turn asks for shorter text.
    capped: bool = False


def _text(limit: int | None) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit} if limit else {"type": "string"}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    # OpenAI strict mode: every property required, no extra properties.
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def reply_json_schema(grounded: Sequence[str] | None = None) -> dict[str, Any]:
    """The reply's schema, inline (no $ref) so that every server can turn it into a grammar.
    With `grounded`, `wine_id` can only be one of those ids, and without any, no wine at all."""
    wine_id = {"type": "string", "enum": list(grounded)} if grounded else {"type": "string"}
    pick = _object({"wine_id": wine_id, "why": _text(MAX_WHY)})
    wines: dict[str, Any] = {"type": "array", "items": pick, "maxItems": ASKED_WINES}
    if grounded is not None and not grounded:
        wines["maxItems"] = 0
    return _object(
        {
            "response_type": {"type": "string", "enum": [t.value for t in ResponseType]},
            "intro": _text(MAX_INTRO),
            "wines": wines,
            "closing": _text(MAX_CLOSING),
            "guard": {
                "anyOf": [{"type": "string", "enum": [g.value for g in Guard]}, {"type": "null"}]
            },
        }
    )


FIELDS = (
    "response_type: recommendation (1 or 2 wines), informational, clarification (one question, "
    "no wines) or off_topic (not about wine or food: a one-line answer and an offer, no "
    "wines); intro: one short sentence to the person; wines: [{wine_id, why: a few words}]; "
    "closing: a short question; guard: null, or off_topic, prompt_injection or "
    "social_engineering."
)
# Words, not counts: told "at most 10 words", a small model writes more than told "a few".


def is_empty(text: str | None) -> bool:
    return text is None or text.strip().lower().strip(".!") in PLACEHOLDERS


def render_text(reply: Reply) -> str:
    """The reply as plain text: intro, the picks, closing (front ends add catalog facts)."""
    parts = [] if is_empty(reply.intro) else [reply.intro.strip()]
    parts += [f"{i}. {w.why.strip()}" for i, w in enumerate(reply.wines, 1) if not is_empty(w.why)]
    if not is_empty(reply.closing):
        parts.append(reply.closing.strip())
    return "\n\n".join(parts)


class ReplySpec:
    """The AnswerSpec of the sommelier's reply."""

    name = "sommelier_reply"

    def json_schema(self, grounded: Sequence[str] | None = None) -> dict[str, Any]:
        return reply_json_schema(grounded)

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

    def validate(self, data: Any, context: AnswerContext, raw: str) -> ParseResult[Reply]:
        try:
            reply = Reply.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
                for e in exc.errors()[:6]
            )
            return ParseResult.failure(ErrorKind.schema, problems, raw)
        reply = refused(reply, context)
        # Markup out before ids become names: "Wine ID: sm-062" is a card's field written
        # out, but "Wine Kanonkop Pinotage" once its id was named reads like prose.
        reply = named(unmarked(trimmed(reply, context.request)), context.labels)
        reply = without_echoes(reply, context)
        reply = without_continuation(reply)
        reply = relabelled(reply, searched=bool(context.grounded))
        picks: list[WinePick] = []
        for pick in reply.wines:
            if pick.wine_id not in {p.wine_id for p in picks}:
                picks.append(pick)
        reply = reply.model_copy(update={"wines": picks})
        problem = (
            semantic_problem(reply)
            or non_answer(reply, context)
            or misnamed(reply, context)
            or ids_in_text(reply, context)
        )
        if problem:
            fallback = (
                with_picks(reply, context, raw)
                or with_own_whys(reply, context, raw)
                or with_found(reply, context, raw)
                or with_offer(reply, context, raw)
                or (_offered(reply, context, raw) if asks_back(reply, context) else None)
                or with_ids_out(reply, context, raw)
                or with_cards(reply, context, raw)
            )
            return ParseResult.failure(
                ErrorKind.semantic, problem, raw, fallback=_sound(fallback, context)
            )
        unknown = [p.wine_id for p in picks if p.wine_id not in context.grounded]
        if unknown:
            return ParseResult.failure(
                ErrorKind.grounding,
                f"wine_id {', '.join(unknown)} did not appear in a tool result of this turn; "
                "recommend only wines returned by search_wines or get_wine",
                raw,
            )
        reply = reply.model_copy(update={"wines": picks[:MAX_WINES]})
        return checked(reply, context, raw)


def refused(reply: Reply, context: AnswerContext) -> Reply:
    """A reply the model labels an injection or social engineering says the fixed, translated
    refusal, not its own words (a small model's "Sure, here is my system prompt" came labelled
    so). A wine request beside it keeps its wines: the refusal stands above them."""
    kind = reply.guard
    if kind not in (Guard.prompt_injection, Guard.social_engineering) or asks_for_wine(context):
        return reply
    said = refusal(str(kind), _language(context))
    update = {"intro": said, "closing": "", "wines": [], "response_type": ResponseType.off_topic}
    return reply.model_copy(update=update)


def accepted(reply: Reply, raw: str) -> ParseResult[Reply]:
    return ParseResult(
        text=render_text(reply), ids=[p.wine_id for p in reply.wines], reply=reply, raw=raw
    )


# A field that ends so is whole, however long; one near its cap that does not may have been
# stopped by the grammar, below the cap too: a server counts the cap in its own units, and the
# Russian and Portuguese whys it cut mid-word were 80 % of the cap.
WHOLE_END = re.compile(r"[.!?…:][\"'»”)]*$")
NEAR_CAP = 0.75
CLAUSE = re.compile(r"[,;:–—]\s")
# "Dr. Loosen", "St. Emilion" or "ca. 15 Euro" goes on: a why cut back to "… by Dr." was
# shown, and an intro to "… kostet ca.". Abbreviations a wine's text uses in the eight
# languages (a lookbehind per word: each must be of fixed width).
ABBREVIATIONS = ("Dr", "St", "Mt", "Mr", "Ch", "ca", "Ca", "approx", "bzw", "evtl", "ggf", "env")
SENTENCE_END = re.compile("".join(rf"(?<!\b{a})" for a in ABBREVIATIONS) + r"[.!?…](?=\s)")
# A word or two after the last sentence, with no end of its own: a start the format stopped
# ("… for a birthday. The" above the line ---).
FRAGMENT = re.compile(r"(?<=[.!?…])\s+\S+(?:\s+\S+)?\s*$")


# Where no grammar enforces the caps (a server that ignores the schema, the delimited text)
# a field may run on: past CEILING times its cap it is cut like a capped one, so a reply stays
# within a few Telegram messages whatever the model writes.
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


def _without_echo(intro: str, request: str) -> str:
    """The intro without a first sentence that only repeats the person's message, or a line
    that quotes it whole ("I understood the words 'What goes with asparagus?'"): small models
    often start so. An intro that is nothing else is kept, for `non_answer` to judge."""
    first, _, rest = intro.partition("\n")
    sentences = SENTENCE.split(first.strip())
    for n in range(1, len(sentences) + 1):  # "I love Riesling. Something for Thai food?"
        if len(request.split()) >= 3 and _normal(" ".join(sentences[:n])) == _normal(request):
            remainder = " ".join(sentences[n:]) + ("\n" + rest if rest else "")
            return remainder.strip() or intro
    asked = _normal(request)
    if len(asked.split()) < 4:
        return intro
    lines = intro.split("\n")
    kept = [line for line in lines if asked not in _normal(line)]
    return (
        "\n".join(kept).strip() if 0 < len(kept) < len(lines) and "".join(kept).strip() else intro
    )


def _without_promises(text: str) -> str:
    """`text` less the sentences that promise a search ("I'll search the catalog for wines
    that match"): the turn's search has run (or was not needed), so such a promise is never
    kept. A field that only promises stays as it is, for `non_answer` to send back."""
    sentences = SENTENCE.split(text.strip())
    promises = [s for s in sentences if _promises(s)]
    return without(text, promises) if promises and len(promises) < len(sentences) else text


def _unfinished_out(text: str) -> str:
    """`text` less a word or two it began after its last whole sentence and never ended."""
    if WHOLE_END.search(text.strip()):
        return text
    return FRAGMENT.sub("", text.rstrip())


def without_borrowed(reply: Reply, context: AnswerContext) -> Reply:
    """A why's sentence that the previous reply said of another wine is left out: small models
    copy the last turn's why to the next wine ("It has a very full body and is rated 4.2 out of
    5." under an Amarone, then under a medium-bodied Carmenère rated 3.5)."""
    before = context.turn.get(PREVIOUS)
    if not context.previous_answer or not isinstance(before, list):
        return reply
    lines = (_LIST_NUMBER.sub("", line) for line in context.previous_answer.split("\n"))
    said = {_normal(s) for line in lines for s in SENTENCE.split(line.strip())}

    def borrowed(why: str) -> list[str]:
        return [
            s for s in SENTENCE.split(why) if len(s.split()) >= MIN_QUOTE and _normal(s) in said
        ]

    wines = [
        w if w.wine_id in before else w.model_copy(update={"why": without(w.why, borrowed(w.why))})
        for w in reply.wines
    ]
    return reply.model_copy(update={"wines": wines})


_LIST_NUMBER = re.compile(r"^\s*\d+[.)]\s*")


def without_continuation(reply: Reply) -> Reply:
    """Above cards, a closing that opens in lower case goes on from a sentence the intro's cap
    cut ("e tem uma excelente nota de 4.3." under "Este vinho tinto é perfeito para um
    churrasco"): alone, it is half a sentence, and is left out. (Checked after the echoes: a
    message quoted back across the two fields is an echo, not a closing.)"""
    if reply.wines and reply.closing.strip()[:1].islower():
        return reply.model_copy(update={"closing": ""})
    return reply


def trimmed(reply: Reply, request: str = "") -> Reply:
    """Soft flaws mended rather than sent back: a field cut at its limit ends at its last
    sentence or clause, or is left out (a card without a why still shows its wine's facts),
    an echo of the request is dropped. (A repair costs seconds; a reset costs the
    conversation.) `capped` says a field was cut."""
    wines, cut = [], False
    for wine in reply.wines:
        why, broken = _trim(wine.why, MAX_WHY)
        wines.append(wine.model_copy(update={"why": why}))
        cut |= broken
    intro, broken_intro = _trim(reply.intro, MAX_INTRO)
    closing, broken_closing = _trim(reply.closing, MAX_CLOSING)
    intro = _without_echo(intro, request)
    intro, closing = _without_promises(intro), _without_promises(closing)
    intro, closing = _unfinished_out(intro), _unfinished_out(closing)
    capped = cut or broken_intro or broken_closing
    update = {"intro": intro, "closing": closing, "wines": wines, "capped": capped}
    return reply.model_copy(update=update)


def _language(context: AnswerContext) -> str:
    reading = context.turn.get(READING)
    return reading.language if isinstance(reading, Reading) else "en"


def checked(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply]:
    """The reply's prose against its cards and the person's language (chat/prose.py). A count
    the cards contradict or letters of another script are mended at once; a false fact or the
    wrong language is a repair, with the reply less the false sentences as fallback."""
    names = context.turn.get(NAMES)
    language = _language(context)
    ctx = ProseContext.of(language, names if isinstance(names, Names) else Names())
    # Here, so that a fallback's prose loses them too.
    said = without_declines(without_borrowed(without_repeats(reply), context), context)
    said = _in_own_words(said, language, context)
    reply = without_prompt_talk(said, context)
    if render_text(said) and not render_text(reply):  # it only answered the prompt
        return accepted(_plain(reply, language), raw)
    whys = [(w.wine_id, w.why) for w in reply.wines]
    found = findings(reply.intro, whys, reply.closing, context.facts, ctx)
    reply = _mended(reply, found.dropped)
    if found.foreign:
        reply = _foreign_out(reply, language)
    if not found.problems and asks_back(reply, context):
        # The sentences that answered were left out (the plan's words, "The person wants to
        # know the difference between Syrah and Shiraz"): a question back alone answers nothing,
        # and the offer to help with wine is shown if the repair asks again.
        return ParseResult.failure(
            ErrorKind.semantic, ASKS_BACK, raw, fallback=_offered(reply, context, raw)
        )
    if not found.problems:
        # Mends can leave nothing but the cards (a count the cards contradict, whys and a
        # closing the cap cut): they answer, under the plain line.
        return accepted(reply if render_text(reply) else _plain(reply, language), raw)
    mended = _mended(reply, found.false)
    if not render_text(mended):
        mended = _plain(mended, language)
    fallback = accepted(mended, raw)
    message = "; ".join(found.problems[:3])
    return ParseResult.failure(ErrorKind.semantic, message, raw, fallback=fallback)


def _in_own_words(reply: Reply, language: str, context: AnswerContext) -> Reply:
    """The English word "wine" in the person's language (prose.native_wine), in every field."""
    propers = [p for facts in context.facts.values() for p in propers_of(facts)]
    return _each_field(reply, lambda text: native_wine(text, language, propers))


def _each_field(reply: Reply, mend: Callable[[str], str]) -> Reply:
    """The reply with `mend` applied to its intro, each why and its closing."""
    wines = [w.model_copy(update={"why": mend(w.why)}) for w in reply.wines]
    update = {"intro": mend(reply.intro), "closing": mend(reply.closing), "wines": wines}
    return reply.model_copy(update=update)


def without_repeats(reply: Reply) -> Reply:
    """A sentence the reply said already is left out: a small model loops ("Het alcohol zit
    niet in de fles." four times), writes one why for two wines, or closes with a question
    its intro asked. A card left without a why still shows its wine's facts."""
    seen: set[str] = set()

    def fresh(text: str) -> str:
        again = []
        for sentence in SENTENCE.split(text.strip()):
            key = _normal(sentence)
            if len(key.split()) > 1 and key in seen:
                again.append(sentence)
            seen.add(key)
        return _without_last(text, again)

    intro = fresh(reply.intro)
    wines = [w.model_copy(update={"why": fresh(w.why)}) for w in reply.wines]
    closing = fresh(reply.closing)
    return reply.model_copy(update={"intro": intro, "wines": wines, "closing": closing})


def _without_last(text: str, sentences: Sequence[str]) -> str:
    """`text` less the given sentences, each taken from its end: the first saying stays."""
    for sentence in sentences:
        head, _, tail = text.rpartition(sentence)
        text = head + tail
    return without(text, []) if sentences else text


def _plain(reply: Reply, language: str) -> Reply:
    """A reply whose every sentence was false or in another language: the cards alone under a
    plain line, or without cards a plain offer to help with wine. Either beats a reset ("Wie
    heeft de Nachtwacht geschilderd?" answered in English three times was one)."""
    if reply.wines:
        return reply.model_copy(update={"intro": found_intro(language)})
    kind = reply.response_type
    if kind == ResponseType.recommendation:
        kind = ResponseType.informational
    update = {"intro": offer_line(language), "closing": "", "response_type": kind}
    return reply.model_copy(update=update)


def _sound(
    fallback: ParseResult[Reply] | None, context: AnswerContext
) -> ParseResult[Reply] | None:
    """A fallback's prose checked like any reply's, its false sentences left out: the
    mended reply is what the person reads when the repair fails too."""
    if fallback is None or fallback.reply is None:
        return fallback
    result = checked(fallback.reply, context, fallback.raw)
    return result if result.ok else result.fallback


def with_picks(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For an answer to a wine request that names no wine although the search found some (a
    recommendation without wines, a decline, an aside), or that names wines under words that
    decline: its own grounded picks, else the search's best in its order, under the model's
    intro, or under a plain line where that intro is empty or declines. The cards show their
    facts."""
    # A decline labelled off_topic still gets the wines asked for; a guarded injection not,
    # unless the person asked for wine too (the model once guarded "Na gut, dann einen Sekt
    # für Silvester" and echoed it three times: a reset where the search had answered).
    guarded = reply.guard in (Guard.prompt_injection, Guard.social_engineering)
    guarded = guarded and not asks_for_wine(context)
    if guarded or not context.facts:
        return None
    declined = context.tools_required and _declines(f"{reply.intro} {reply.closing}")
    own = [w for w in reply.wines if w.wine_id in context.grounded]
    recommends = reply.response_type == ResponseType.recommendation
    if reply.wines and not declined:
        return None
    if not (reply.wines or recommends or declined or asks_for_wine(context)):
        return None
    best = [i for i in context.facts if i in context.grounded][:ASKED_WINES]
    picks = own or [WinePick(wine_id=i, why="") for i in best]
    if not picks:
        return None
    intro, closing = reply.intro, reply.closing
    echoed = only_echoes(reply, context)
    if is_empty(intro) or _declines(intro) or echoed:
        intro = found_intro(_language(context))
    update = {
        "response_type": ResponseType.recommendation,
        "intro": intro,
        "closing": "" if _declines(closing) or echoed else closing,
        "wines": picks,
        "guard": None,
    }
    return accepted(reply.model_copy(update=update), raw)


def with_found(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For a reply that repeats the previous one word for word ("tell me more about the first
    one" answered with the same cards): the wines this turn's tools returned, their facts
    under a plain line, rather than a reset."""
    repeated = repeats(reply, context)
    found = [i for i in context.facts if i in context.grounded][:ASKED_WINES]
    if not repeated or not found:
        return None
    picks = [WinePick(wine_id=i, why="") for i in found]
    update = {
        "response_type": ResponseType.recommendation,
        "intro": found_intro(_language(context)),
        "closing": "",
        "wines": picks,
        "guard": None,
    }
    return accepted(reply.model_copy(update=update), raw)


def with_offer(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For a question that is not a wine request answered only by quoting it back (a small
    model's way of not knowing): a plain offer to help with wine, rather than a reset."""
    if reply.wines or asks_for_wine(context) or not only_echoes(reply, context):
        return None
    return _offered(reply, context, raw)


def _offered(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply]:
    """The plain, translated offer to help with wine ("I don't have a good answer to that.
    Tell me what you're eating…"), in place of a reply that did not answer."""
    update = {
        "response_type": ResponseType.off_topic,
        "intro": offer_line(_language(context)),
        "closing": "",
        "guard": reply.guard or Guard.off_topic,
    }
    return accepted(reply.model_copy(update=update), raw)


def echoes(intro: str, request: str) -> bool:
    """Whether the intro is nothing but the person's message (of three words or more)."""
    return len(request.split()) >= 3 and _normal(intro) == _normal(request)


MIN_QUOTE = 4  # words: fewer may be a phrase any answer shares with the message
# A sentence this alike (rapidfuzz's ratio, in %) to the message or one of its sentences says
# it again in other words: "Olá, eu preciso de um vinho para um jantar de frutos do mar. Não
# quero tinto." for "Olá! Preciso de um vinho para um jantar de frutos do mar, nada de tinto"
# (87). "Hier ist ein trockener Rotwein zu Lammkeule" (83) for "Ich suche einen trockenen
# Rotwein zu Lammkeule" answers it. Seven words or more of the message: a short request's
# words make a fair intro ("Ecco un rosso sotto i 12 euro" for "Un rosso sotto i 12 euro?").
PARAPHRASE, MIN_PARAPHRASE = 85, 7


def quotes(text: str, message: str) -> bool:
    """Whether `text` is the person's message, or only a run of four words or more of it: the
    intro "Quero um tinto encorpado pro churrasco." answered the next message, a question
    about Argentina, with the first half of this one."""
    said = _normal(text)
    return echoes(text, message) or (
        len(said.split()) >= MIN_QUOTE and f" {said} " in f" {_normal(message)} "
    )


def restates(text: str, message: str) -> bool:
    """Whether `text` quotes the person's message (`quotes`), or says it again in a few other
    words, as the person ("Ik wil een Franse rosé…" came back as "Het is een Franse rosé…")."""
    if quotes(text, message):
        return True
    said = _normal(text)
    heard = [_normal(part) for part in (message, *SENTENCE.split(message.strip()))]
    return any(
        len(part.split()) >= MIN_PARAPHRASE and fuzz.ratio(said, part) >= PARAPHRASE
        for part in heard
    )


def only_echoes(reply: Reply, context: AnswerContext) -> bool:
    """Whether the intro, or the prose as a whole, is nothing but the person's message, this
    one or one just before it (an empty intro above a closing that quotes the question says
    nothing either; "Tem algum da Argentina?" was once answered with the message before it)."""
    said = (reply.intro, f"{reply.intro} {reply.closing}")
    return any(echoes(text, request) for text in said for request in _messages(context))


def without_echoes(reply: Reply, context: AnswerContext) -> Reply:
    """With cards shown, they answer: an intro or a closing that only quotes the person (or
    the two together, split across them) gives way to a plain line, rather than a repair. So
    does an intro that only repeats the previous reply: "La capitale de l'Australie est
    Sydney" stood above the Australian wines asked for next. Sentences that say again the
    person's message, even in other words, or what the previous reply said are left out of the
    intro and the closing. Without cards, only the message word for word next to an answer."""
    if not reply.wines:
        return _without_question_again(reply, context.request)
    messages = _messages(context)
    intro = any(restates(reply.intro, m) for m in messages)
    closing = any(restates(reply.closing, m) for m in messages)
    both = any(restates(f"{reply.intro} {reply.closing}", m) for m in messages)
    update: dict[str, str] = {}
    previous = context.previous_answer or ""
    # A whole reply said again is sent back by `non_answer`, with feedback that says so.
    again = repeats(reply, context)
    stale = "" if again else previous
    fresh = _without_said(reply.intro, messages, stale)
    if fresh != reply.intro:
        update["intro"] = fresh or found_intro(_language(context))
    closing_now = _without_said(reply.closing, messages, stale)
    if closing_now != reply.closing:  # "What would you like to know about cars?" again
        update["closing"] = closing_now
    if intro or both:
        update["intro"] = found_intro(_language(context))
    if closing or both:
        update["closing"] = ""
    return reply.model_copy(update=update) if update else reply


def _without_question_again(reply: Reply, request: str) -> Reply:
    """Without cards: a sentence that is the person's message word for word, next to an answer,
    is left out ("Die Antwort ist: … Wie lange hält sich ein offener Rotwein im Kühlschrank?").
    Only the exact message: "No, no se puede cocinar con un vino que lleva una semana
    abierto" answers "¿Se puede cocinar con un vino que lleva una semana abierto?"."""

    def said_again(text: str) -> list[str]:
        return [s for s in SENTENCE.split(text.strip()) if echoes(s, request)]

    intro = without(reply.intro, said_again(reply.intro))
    closing = without(reply.closing, said_again(reply.closing))
    if is_empty(intro) or (intro, closing) == (reply.intro, reply.closing):
        return reply  # nothing else said: `non_answer` judges it
    return reply.model_copy(update={"intro": intro, "closing": closing})


def _without_said(text: str, messages: Sequence[str], previous: str) -> str:
    """`text` less its sentences that only say again what was said: the person's messages
    (`restates`), or the previous reply (four words or more of it)."""
    said = [
        s
        for s in SENTENCE.split(text)
        if any(restates(s, m) for m in messages) or (previous and quotes(s, previous))
    ]
    return without(text, said) if said else text


def without_declines(reply: Reply, context: AnswerContext) -> Reply:
    """Above cards, a sentence saying nothing was found or understood ("non ho trovato alcun
    vino", "I didn't understand your message") is false: the cards answer. Such an intro gives
    way to a plain line (the rest of it was framing for no wines); such sentences in a why or
    the closing are left out. The words are the lexicons' `declines`, in eight languages."""
    if not reply.wines:
        return reply
    return _without_marked(reply, context, "declines", intro=found_intro(_language(context)))


def without_prompt_talk(reply: Reply, context: AnswerContext) -> Reply:
    """A sentence that answers the prompt, not the person, is left out wherever it stands:
    one about the answer's format ("Вот ваши предложения, разделенные точкой с запятой", "…
    depois do JSON"), or one about the person in the third person ("The person wants to know
    the difference between Syrah and Shiraz", the plan's words). The words are the lexicons'
    `prompt_talk`. Above cards, an intro that was nothing else gives way to a plain line."""
    mended = _without_marked(reply, context, "prompt_talk")
    if reply.wines and reply.intro.strip() and not mended.intro:
        return mended.model_copy(update={"intro": found_intro(_language(context))})
    return mended


def _without_marked(
    reply: Reply, context: AnswerContext, marker: str, intro: str | None = None
) -> Reply:
    """The reply less its sentences with one of the lexicons' `marker` words; an intro that
    had one becomes `intro` when given."""
    phrases = words_for(_language(context), Names()).markers.get(marker)
    if phrases is None:
        return reply

    def marked(text: str) -> list[str]:
        return [s for s in SENTENCE.split(text) if phrases.pattern.search(fold(s))]

    found = {f"why:{i}": marked(w.why) for i, w in enumerate(reply.wines)}
    found |= {"closing": marked(reply.closing)}
    if intro is None:
        found["intro"] = marked(reply.intro)
    mended = _mended(reply, found)
    if intro is not None and marked(reply.intro):
        mended = mended.model_copy(update={"intro": intro})
    return mended


def _messages(context: AnswerContext) -> tuple[str, ...]:
    """The person's message and the ones just before it."""
    reading = context.turn.get(READING)
    earlier = reading.earlier_texts if isinstance(reading, Reading) else ()
    return (context.request, *earlier)


def _declines(text: str) -> bool:
    return bool(_CANT.search(text) or _PUNT.search(text))


def asks_for_wine(context: AnswerContext) -> bool:
    """Whether the person asked for wines this turn (not "tell me more about the first one")."""
    reading = context.turn.get(READING)
    return (
        context.tools_required
        and isinstance(reading, Reading)
        and reading.wine_request
        and not reading.reference
    )


def with_own_whys(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For whys that describe another wine of the results: left out (the cards show their own
    wine's facts)."""
    mixed = [p.wine_id for p in reply.wines if _describes_another(p, context)]
    if not mixed:
        return None
    wines = [w.model_copy(update={"why": ""}) if w.wine_id in mixed else w for w in reply.wines]
    return accepted(reply.model_copy(update={"wines": wines}), raw)


def _foreign_out(reply: Reply, language: str) -> Reply:
    return _each_field(reply, lambda text: without_foreign(text, language))


def _field(reply: Reply, where: str) -> str:
    if where.startswith("why:"):
        return reply.wines[int(where[4:])].why
    return str(getattr(reply, where))


def _mended(reply: Reply, false: dict[str, list[str]]) -> Reply:
    """The reply without its false or broken sentences (a card whose why is left empty still
    shows its wine's facts)."""
    wines = [
        w.model_copy(update={"why": without(w.why, false.get(f"why:{i}", []))})
        for i, w in enumerate(reply.wines)
    ]
    intro = without(reply.intro, false.get("intro", []))
    closing = without(reply.closing, false.get("closing", []))
    return reply.model_copy(update={"intro": intro, "closing": closing, "wines": wines})


def unmarked(reply: Reply) -> Reply:
    """JSON, field names, the delimiter or a search result's lines written into the intro or
    closing (small models echo the format they were told about, and copy the tool's English
    lines): cut out, not sent back, keeping the sentences before it on each line ("intro: Here
    are…" keeps "Here are…"). A repair of this costs seconds and often fails the same way."""
    intro, closing = _unmarked(reply.intro), _unmarked(reply.closing)
    if (intro, closing) == (reply.intro, reply.closing):
        return reply
    return reply.model_copy(update={"intro": intro, "closing": closing})


def _unmarked(text: str) -> str:
    lines, cut = [], False
    for line in text.split("\n"):
        echoed = (
            _TABLE_ROW.search(line)
            or _FIELD_LINE.match(line)
            or _NOTE_LINE.match(line)
            or _BARE_NUMBER.match(line)
        )
        kept = "" if echoed else _LABEL.sub("", _OPEN_BRACKET.sub("", line))
        markup = _MARKUP.search(kept)
        kept = _before(kept, markup.start()) if markup else kept
        cut |= kept != line
        if kept.strip() or kept == line:  # blank lines between paragraphs stay
            lines.append(kept)
    return "\n".join(lines).strip() if cut else text


def _before(line: str, cut: int) -> str:
    """The line before markup, less a stub of a sentence the markup began: "The wines from
    the catalog that match are:" (the search result's head, copied) left "The" alone."""
    kept = line[:cut].rstrip()
    ends = [m.end() for m in re.finditer(r"[.!?…:]", kept)]
    start = ends[-1] if ends else 0
    return kept if len(kept[start:].split()) >= STUB_WORDS else kept[:start].rstrip()


def relabelled(reply: Reply, searched: bool = True) -> Reply:
    """Labels small models pick loosely, mended rather than sent back: a "clarification" that
    asks nothing is an answer that says something, and so is a "recommendation" without wines
    in a turn that found none to recommend ("Who painted the Mona Lisa?")."""
    asks = "?" in reply.intro + reply.closing
    wineless = reply.response_type == ResponseType.recommendation and not reply.wines
    if (reply.response_type == ResponseType.clarification and not asks) or (
        wineless and not searched
    ):
        return reply.model_copy(update={"response_type": ResponseType.informational})
    return reply


def semantic_problem(reply: Reply) -> str | None:
    texts = [reply.intro, reply.closing, *(w.why for w in reply.wines)]
    if all(is_empty(t) for t in texts):
        return "intro, closing and every why are empty; write the answer for the person"
    if reply.response_type == ResponseType.recommendation and not reply.wines:
        return "a recommendation needs at least one wine from the tool results"
    if reply.response_type == ResponseType.off_topic and is_empty(reply.intro):
        return "an off_topic reply needs an intro that politely steers back to wine"
    if reply.guard in (Guard.prompt_injection, Guard.social_engineering) and reply.wines:
        return f"a reply labelled {reply.guard} must not recommend wines"
    empty_why = [w.wine_id for w in reply.wines if is_empty(w.why) and not reply.capped]
    if empty_why:
        return f"every wine needs a why; empty for {', '.join(empty_why)}"
    return None


# JSON (a tool call, the answer itself), a field name or the delimiter written into the intro;
# a catalog line copied as a table row, a search result's head, a "Wine 2:" label.
_MARKUP = re.compile(
    r'\{\s*"|(?<=\S)[ \t]+---|```|\[?\bI suggested:'
    r'|"(?:intro|wines|closing|guard|why)"\s*:|\b(?:response_type|wine_id)\b'
    r"|\bthe (?:intro|closing)\s*:"
    rf"|\bwine\s*#?\d\s*:|{re.escape(MATCH_HEAD)}|{re.escape(PICKS_HEAD)}"
    rf"|{re.escape(NOTHING_HEAD)}\s[^\n]*?;\s*{re.escape(CLOSEST_HEAD)}|{re.escape(NO_WINES)}",
    re.IGNORECASE,
)
# A line that is a card's field written out ("Wine ID: …", "Why: …"): the card shows it.
_FIELD_LINE = re.compile(r"^\s*(?:wine[\s_-]*id|why|wines?)\s*:", re.IGNORECASE)
_TABLE_ROW = re.compile(r" \| .* \| ")
# A whole line in brackets is a note of the prompt's or the history's, not prose for the
# person: "[no tool is needed]" (the plan's wording), "[Il personale ha detto: …]".
_NOTE_LINE = re.compile(r"^\s*\[[^\[\]]*\]\s*$")
# A field's or a speaker's name opening a line ("intro: …", "Sommelier: …", once "Osmelier:").
_LABEL = re.compile(
    r"^\s*(?:[\"']?intro[\"']?\s*[:=]|\w*melier\s*:|assistant\s*:)\s*", re.IGNORECASE
)
# Fewer words than this after a sentence's end, before markup, are a stub, not a sentence.
STUB_WORDS = 3
# A list number alone on its line ("1." above the cards, whose whys are numbered already).
_BARE_NUMBER = re.compile(r"^\s*\d+[.)]?\s*$")
# A bracket that opens a line and never closes ("[Извините, …", "[intro: Here are…"): the
# model began a note or a field and wrote prose after it; the bracket goes, the prose stays.
_OPEN_BRACKET = re.compile(r"^\s*\[(?=[^\]]*$)")
# "I'm sorry, but I can't assist with that" to a wine request: a refusal nobody asked for.
_CANT = re.compile(r"\b(?:can(?:not|'t)|unable to|not able to)\s+(?:assist|help)\b", re.IGNORECASE)

# "Please search the catalog", "you can check our list", "I can't browse the catalog": the
# sommelier searches; the person never has to.
_PUNT = re.compile(
    r"\b(search|check|look\s+(?:it\s+)?up|look\s+through|browse|consult|explore)\b[^.?!]{0,40}"
    r"\b(catalog(?:ue)?|database|inventory|selection|wine\s+list|list|website|store|shop)\b"
    r"|\b(?:can(?:not|'t)|unable\s+to|don'?t\s+have\s+access\s+to)\s+"
    r"(?:search|access|browse)\b",
    re.IGNORECASE,
)
_YOU = re.compile(r"\b(you|please|feel free)\b", re.IGNORECASE)


def _punts(sentence: str) -> list[bool]:
    """For each mention of searching the catalog in a sentence: whether it hands the search
    to the person ("Can you search the catalog?", "I can't access it") rather than promising
    to do it ("Let me check our selection for you")."""
    return [
        match.group(1) is None or bool(_YOU.search(sentence[: match.end()]))
        for match in _PUNT.finditer(sentence)
    ]


def _promises(sentence: str) -> bool:
    found = _punts(sentence)
    return bool(found) and not any(found)


def non_answer(reply: Reply, context: AnswerContext) -> str | None:
    """A reply that does not answer: it hands the search back, only promises one, or repeats
    itself."""
    said = f"{reply.intro} {reply.closing}"
    sentences = SENTENCE.split(said)
    if any(any(_punts(s)) for s in sentences):
        return (
            "do not ask the person to search or check the catalog: the search results are "
            "above; recommend from them, or say plainly that nothing matched"
        )
    if only_echoes(reply, context):
        return (
            "the intro only repeats my message: answer it (a question that is not about wine: "
            "one short sentence, then offer help with wine)"
        )
    if any(_promises(s) for s in sentences):
        return (
            "do not promise a search: it has run, and its results are above; recommend from "
            "them, or say plainly that nothing matched"
        )
    if context.tools_required and _CANT.search(said):
        return (
            "this is a wine request and the search results are above: recommend from them, or "
            "say what matched least badly; do not decline"
        )
    if _wineless(reply, context):
        return (
            "this is a wine request and the search found wines: recommend one to three of them "
            "with wine_id (say so if they match only part of what I asked)"
        )
    if asks_back(reply, context):
        return ASKS_BACK
    if repeats(reply, context):
        return (
            "this repeats your previous reply word for word; answer my new message "
            f"({context.request[:200]!r}) with the tool results above"
        )
    return None


ASKS_BACK = (
    "answer my question in one or two sentences (then you may offer help with wine); do not "
    "only ask me a question back"
)


def asks_back(reply: Reply, context: AnswerContext) -> bool:
    """A general question ("Is it true wine should be stored lying down?") answered only with
    a question ("What do you want to know about storing wine?"): no answer at all."""
    reading = context.turn.get(READING)
    asked = isinstance(reading, Reading) and reading.question and not reading.wine_request
    return asked and not reply.wines and only_questions(f"{reply.intro}\n{reply.closing}")


def only_questions(text: str) -> bool:
    """Whether every sentence of `text` asks ("Was möchtest du wissen?"), bar lead-ins that end
    in a colon ("Вот что мне нужно сказать:")."""
    sentences = [s.strip() for line in text.split("\n") for s in SENTENCE.split(line.strip())]
    said = [s for s in sentences if s and not s.endswith(":")]
    return bool(said) and all(s.endswith("?") for s in said)


def repeats(reply: Reply, context: AnswerContext) -> bool:
    """Whether the reply says the previous one again word for word, about the same wines. The
    plain line above other wines (whys the cap emptied) is a new answer: the cards differ."""
    previous = context.previous_answer
    if not previous or _normal(render_text(reply)) != _normal(previous):
        return False
    before = context.turn.get(PREVIOUS)
    return not isinstance(before, list) or {w.wine_id for w in reply.wines} == set(before)


def _wineless(reply: Reply, context: AnswerContext) -> bool:
    """No card for a wine request whose search found wines: a decline, a shrug or a question
    back in any language ("Je hebt geen specifieke wijn gevonden"), which word lists miss.
    Without words of asking ("what grape is Chablis?") the model's answer stands; a question
    back stands when the person named nothing to go on ("recommend me a wine"), here or
    earlier in the conversation."""
    guarded = reply.guard in (Guard.prompt_injection, Guard.social_engineering)
    if reply.wines or guarded or not context.grounded or not asks_for_wine(context):
        return False
    reading = context.turn[READING]
    assert isinstance(reading, Reading)  # asks_for_wine checked it
    if not (reading.request or reading.follow_up or reading.price or _wished(reading)):
        return False
    # What to go on may be in this message or earlier ("Syrah or Shiraz?" … "one of each").
    wishes = (reading.filters, reading.excluded, reading.price, reading.earlier_subject)
    named = reading.follow_up or any(wishes)
    return named or reply.response_type != ResponseType.clarification


WISHES = ("type", "types", "food", "grape", "region", "sweetness", "body")


def _wished(reading: Reading) -> bool:
    """A wish named without words of asking: "un bianco fresco per il pesce", "A dry
    Riesling". A statement of taste with no dish and no question mark ("I love Barolo.") is
    not one: it may be answered in words."""
    if not any(k in reading.filters for k in WISHES):
        return False
    statement = reading.likes or reading.dislikes
    return not statement or "food" in reading.filters or "?" in reading.text


def misnamed(reply: Reply, context: AnswerContext) -> str | None:
    """A why that names another wine from the results: the card would show one wine and the
    text describe another (small models mix up neighbouring rows)."""
    for pick in reply.wines:
        other = _describes_another(pick, context)
        if other is not None:
            return (
                f"the why of {pick.wine_id} describes {context.labels[other]} ({other}), another "
                "wine; pair each why with the wine_id of the wine it describes"
            )
    return None


def _describes_another(pick: WinePick, context: AnswerContext) -> str | None:
    names = {wine_id: _normal(name) for wine_id, name in context.labels.items() if name}
    why = _normal(pick.why)
    if names.get(pick.wine_id, "\0") in why:
        return None
    return next((i for i, n in names.items() if i != pick.wine_id and n in why), None)


def named(reply: Reply, labels: Mapping[str, str]) -> Reply:
    """Ids of this turn's wines written into the text, mended into the wines' names: a soft
    flaw (small models copy the tool lines' ids) that otherwise costs a repair call, or the
    whole turn when the model keeps doing it. Ids without a known name are left to
    `ids_in_text`."""

    def mend(text: str) -> str:
        for wine_id, name in labels.items():
            text = _in_latin(text, wine_id)
            if name and wine_id.casefold() in text.casefold():
                text = _id_to_name(text, wine_id, name)
        return text

    wines = [w.model_copy(update={"why": mend(w.why)}) for w in reply.wines]
    return reply.model_copy(
        update={"intro": mend(reply.intro), "closing": mend(reply.closing), "wines": wines}
    )


# Latin letters and the Cyrillic ones a model writes for them in a Russian sentence, by sound
# or by look: "См-037" is sm-037.
_CYRILLIC = {
    "a": "а", "b": "бв", "c": "сцк", "d": "д", "e": "еэ", "g": "г", "h": "хн", "i": "и",
    "k": "к", "l": "л", "m": "м", "n": "н", "o": "о", "p": "пр", "r": "р", "s": "с", "t": "т",
    "u": "у", "v": "в", "x": "х", "y": "уы", "z": "з",
}  # fmt: skip


def _in_latin(text: str, wine_id: str) -> str:
    """`text` with `wine_id` spelt in Cyrillic letters written back in Latin ones."""
    if text.isascii():
        return text
    letters = "".join(
        f"[{c}{_CYRILLIC[c.lower()]}]" if c.lower() in _CYRILLIC else re.escape(c) for c in wine_id
    )
    return re.sub(rf"(?i:(?<![\w-]){letters}(?![\w-]))", wine_id, text)


def _id_to_name(text: str, wine_id: str, name: str) -> str:
    literal = name.replace("\\", "\\\\")  # a replacement string, not a pattern
    # Any case: a sentence may open with "Sm-009".
    own = rf"(?i:(?:\bid\s*[:#]?\s*)?(?<![\w-]){re.escape(wine_id)}(?![\w-]))"
    text = re.sub(own, literal, text)
    # "Name (Name)", "Name: Name", "Name - Name": the id stood beside the name.
    same = re.escape(name)
    return re.sub(rf"{same}\s*(?:[(\[]\s*{same}\s*[)\]]|[:,–—-]?\s*{same})", literal, text)


def ids_in_text(reply: Reply, context: AnswerContext) -> str | None:
    """Ids belong in wine_id; the person reads names (the card shows the facts)."""
    shown = _ids_in(_prose(reply), context)
    if shown:
        return f"write wine names, not ids, in the text for the person (found {shown[0]})"
    return None


def with_ids_out(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For ids the model keeps writing into the text: its sentences that hold one left out
    (the cards name their wines), rather than a reset after the repairs."""
    if not _ids_in(_prose(reply), context) or semantic_problem(reply) or non_answer(reply, context):
        return None

    def mend(text: str) -> str:
        return without(text, [s for s in SENTENCE.split(text) if _ids_in(s, context)])

    wines = [
        w.model_copy(update={"why": mend(w.why)})
        for w in reply.wines
        if w.wine_id in context.grounded
    ]
    intro = mend(reply.intro) or (found_intro(_language(context)) if wines else "")
    update = {"intro": intro, "closing": mend(reply.closing), "wines": wines[:MAX_WINES]}
    mended = reply.model_copy(update=update)
    return None if is_empty(render_text(mended)) and not wines else accepted(mended, raw)


def with_cards(reply: Reply, context: AnswerContext, raw: str) -> ParseResult[Reply] | None:
    """For grounded wines with not a word about them (every why empty; the text was only the
    tool's lines, cut out): the cards, which show their facts, under the model's intro if it
    answers, else a plain line, rather than a reset."""
    picks = [w for w in reply.wines if w.wine_id in context.grounded][:MAX_WINES]
    guarded = reply.guard in (Guard.prompt_injection, Guard.social_engineering)
    if not picks or guarded or any(not is_empty(w.why) for w in picks):
        return None
    update: dict[str, Any] = {
        "response_type": ResponseType.recommendation,
        "wines": picks,
        "guard": None,
    }
    if is_empty(reply.intro) or non_answer(reply, context):
        update |= {"intro": found_intro(_language(context)), "closing": ""}
    return accepted(reply.model_copy(update=update), raw)


def _ids_in(text: str, context: AnswerContext) -> list[str]:
    """This turn's wine ids written in `text`, in any case: a sentence may open with "Sm-009"."""
    folded = text.casefold()
    return [wine_id for wine_id in context.grounded if wine_id.casefold() in folded]


def _prose(reply: Reply) -> str:
    return " ".join([reply.intro, reply.closing, *(w.why for w in reply.wines)])


def _normal(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()
