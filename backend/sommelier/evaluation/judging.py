"""What the evaluation checks on a reply, independently of the runtime's own validation: the
wines' catalog rows against what the person asked (`Expect`), the language the text is
written in, and the facts the text states about its cards."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sommelier.catalog.lexicon import fold
from sommelier.catalog.tools import facts_of
from sommelier.chat.prose import ProseContext, findings, own_words
from sommelier.chat.service import TurnReply
from sommelier.db.models import Wine
from sommelier.evaluation.dialogs import Expect
from sommelier.i18n.languages import likely

SWEET = ("sweet", "medium-sweet")


def violations(expect: Expect | None, wines: Sequence[Wine], previous: Sequence[Wine]) -> list[str]:
    """What the reply's wines break of what the person asked; empty when nothing."""
    if expect is None:
        return []
    if not expect.wines:
        return [f"{len(wines)} wine(s) nobody asked for"] if wines else []
    if not wines:
        return ["no wine"]
    broken = [problem for wine in wines for problem in _wine(expect, wine)]
    if expect.grapes and not any(_grapes(w) & set(expect.grapes) for w in wines):
        broken.append(f"none of {', '.join(expect.grapes)}")
    if expect.cheaper:
        dearest = max((w.price for w in previous if w.price is not None), default=None)
        broken += [
            f"{w.external_id} at {w.price:g} is not cheaper than {dearest:g}"
            for w in wines
            if dearest is not None and w.price is not None and w.price >= dearest
        ]
    return broken


def _grapes(wine: Wine) -> set[str]:
    return {fold(g) for g in wine.grapes}


def _wine(expect: Expect, wine: Wine) -> list[str]:
    country = fold(wine.country or "")
    sweetness = wine.sweetness or ""
    checks = [
        (bool(expect.types) and wine.type not in expect.types, f"a {wine.type}"),
        (wine.type in expect.not_types, f"a {wine.type}"),
        (bool(expect.countries) and country not in expect.countries, f"from {country}"),
        (country in expect.not_countries, f"from {country}"),
        (
            expect.max_price is not None and (wine.price or 0) > expect.max_price,
            f"at {wine.price:g}" if wine.price is not None else "no price",
        ),
        (expect.sweet and sweetness not in SWEET and wine.type != "dessert", f"{sweetness}"),
        (expect.not_sweet and sweetness in SWEET, f"{sweetness}"),
    ]
    return [f"{wine.external_id} is {what}" for broken, what in checks if broken]


def reply_language(reply: TurnReply) -> str | None:
    """The language the reply's own words are in: the wines' names, producers, grapes and
    places left out ("Grüner Veltliner from Wachau" is not German prose); None when the prose
    left is too little to tell."""
    text = " ".join(
        [reply.intro, *(c.why for c in reply.cards), reply.closing] if reply.reply else [reply.text]
    )
    propers = [p for c in reply.cards for p in (c.name, c.producer, c.place, *c.grapes) if p]
    text = own_words(text, propers)
    return likely(text)


def contradictions(reply: TurnReply, wines: Sequence[Wine], language: str, names: Any) -> int:
    """False facts the final reply still states about its cards (chat/prose.py)."""
    if reply.reply is None:
        return 0
    facts = {w.external_id: facts_of(w) for w in wines}
    whys = [(c.wine_id, c.why) for c in reply.cards]
    found = findings(reply.intro, whys, reply.closing, facts, ProseContext.of(language, names))
    return sum(len(sentences) for sentences in found.false.values())
