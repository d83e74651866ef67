"""What a recommendation says, from data: each wine's reasons from its catalog row and the
search that found it (the dish it is paired with, the wishes it meets, the budget it fits, its
rating), the intro from what was searched, and a closing that says what to ask next, all in
translated templates. A small model's prose cannot state a false fact about a card this way;
the model's own sentence about a wine stays beside the reasons when it is a whole sentence (its
facts are checked by chat/prose.py like any prose).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sommelier.agent.text import sentences
from sommelier.catalog.support import ASKED, dish, met, supported
from sommelier.chat.labels import FOODS, found_intro, wishes
from sommelier.db.models import Wine
from sommelier.i18n.languages import COVERED
from sommelier.i18n.translations import N_, money, number, translator

REASONS = {
    "pairs_with_dish": N_("A classic match for {food}."),
    "as_asked": N_("It is {wishes}, as you asked."),
    "in_budget": N_("At {price}, within your budget."),
    "well_rated": N_("Rated {rating} out of 5."),
}
# When the row supports no reason and the model wrote no whole sentence: what the wine is.
PLAIN = N_("A wine that is {wishes}.")
INTRO = N_("Wines that are {wishes}:")
INTRO_KEPT = N_("From your cellar, wines that are {wishes}:")
CLOSING = N_("Ask me how to serve them, which suits your dish best, or for something cheaper.")
MAX_REASONS = 2
MIN_WORDS = 4


def searched(tools: Sequence[Any]) -> dict[str, Any]:
    """The arguments the turn's last search ran with, less the model's guesses and what it
    gave up (its notes say which)."""
    runs = [t for t in tools if t.call.name == "search_wines" and t.ok]
    if not runs or not isinstance(runs[-1].arguments, dict):
        return {}
    args = dict(runs[-1].arguments)
    dropped = set(args.pop("guessed", None) or []) | set(runs[-1].notes.get("relaxed") or {})
    return {k: v for k, v in args.items() if k not in dropped and v not in (None, "", [])}


def why(wine: Wine, asked: Mapping[str, Any], pick: Any, language: str) -> str:
    """The reason the model chose for this wine first, then the next its row supports (two at
    most), then the model's own sentence when that is a whole one in a language whose words
    the prose checks read (in another, a small model's sentence was garbled Polish, Czech or
    Greek, and its claims, "an Italian red" of a Franciacorta, went unchecked)."""
    supported_here = supported(wine, asked)
    chosen = [pick.reason] if pick.reason in supported_here else []
    chosen += [r for r in supported_here if r not in chosen]
    said = " ".join(_capital(said_reason(r, wine, asked, language)) for r in chosen[:MAX_REASONS])
    sentence = _first_sentence(pick.why) if language in COVERED else ""
    if not said and not sentence:
        return plain(wine, language)
    return " ".join(p for p in (said, sentence) if p)


def plain(wine: Wine, language: str) -> str:
    """ "A wine that is red, made from Malbec and from Argentina." """
    row = {"type": wine.type, "grape": wine.grapes[0] if wine.grapes else None}
    named = wishes(row | {"country": wine.country}, language, wine.currency or "EUR")
    return translator(language)(PLAIN).format(wishes=named) if named else ""


def said_reason(reason: str, wine: Wine, asked: Mapping[str, Any], language: str) -> str:
    """One reason in the person's language, its facts from the row and the request."""
    t = translator(language)
    template = t(REASONS[reason])
    if reason == "pairs_with_dish":
        food = dish(wine, asked.get("food")) or ""
        return template.format(food=t(FOODS.get(food, food)))
    if reason == "as_asked":
        return template.format(wishes=wishes(met(wine, asked), language, wine.currency or "EUR"))
    if reason == "in_budget":
        return template.format(price=money(wine.price or 0, wine.currency, language))
    return template.format(rating=number(round(wine.rating_avg or 0, 1), language))


def intro(asked: Mapping[str, Any], language: str, currency: str) -> str:
    """ "Wines that are red, from France, and at €25.00 or less:" ("From your cellar, …" for a
    search of the person's own bottles), or "" when nothing was asked that every card meets."""
    named = wishes(
        {k: v for k, v in asked.items() if k in ASKED or k == "max_price"}, language, currency
    )
    said = INTRO_KEPT if asked.get("only_ids") else INTRO
    return translator(language)(said).format(wishes=named) if named else ""


def opening(asked: Mapping[str, Any], language: str, currency: str) -> str:
    """The intro a recommendation that searched opens with: what was asked, or that wines were
    found (in the person's cellar, for a search of their own bottles)."""
    cellar = bool(asked.get("only_ids"))
    return intro(asked, language, currency) or found_intro(language, cellar)


def closing(language: str) -> str:
    return translator(language)(CLOSING)


def _first_sentence(text: str) -> str:
    """The model's first sentence, when it is a whole one of a few words; a stub ("Dr.", "är
    en smidig.") says nothing."""
    first = next(iter(sentences(text)), "")
    if _unspaced(first):
        return first
    whole = bool(first) and first[-1] in ".!?" and len(first.split()) >= MIN_WORDS
    return first if whole else ""


def _unspaced(text: str) -> bool:
    """Chinese and Japanese write a whole sentence without spaces."""
    return len(text) >= 8 and text[-1] in "。！？" and " " not in text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
