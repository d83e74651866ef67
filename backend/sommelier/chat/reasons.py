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

from sommelier.catalog.lexicon import fold
from sommelier.chat.labels import FOODS, wishes
from sommelier.chat.prose import SENTENCE
from sommelier.db.models import Wine
from sommelier.i18n.translations import N_, money, number, translator

REASONS = {
    "dish": N_("A classic match for {food}."),
    "asked": N_("It is {wishes}, as you asked."),
    "budget": N_("At {price}, within your budget."),
    "rating": N_("Rated {rating} out of 5."),
}
INTRO = N_("Wines that are {wishes}:")
CLOSING = N_("Ask me how to serve them, which suits your dish best, or for something cheaper.")
WELL_RATED = 4.0
MAX_REASONS = 2
ASKED = ("sweetness", "type", "types", "grape", "region", "country", "countries")
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


def why(wine: Wine, asked: Mapping[str, Any], own: str, language: str) -> str:
    """The reasons this wine fits, then the model's own sentence when it is a whole one."""
    said = reasons(wine, asked, language)
    sentence = _first_sentence(own)
    return " ".join(p for p in (said, sentence) if p)


def reasons(wine: Wine, asked: Mapping[str, Any], language: str) -> str:
    t = translator(language)
    found: list[str] = []
    food = _food(wine, asked.get("food"))
    if food:
        found.append(t(REASONS["dish"]).format(food=t(FOODS.get(food, food))))
    met = {k: v for k, v in asked.items() if k in ASKED and _meets(wine, k, v)}
    if met:
        named = wishes(met, language, wine.currency or "EUR")
        found.append(t(REASONS["asked"]).format(wishes=named))
    budget = asked.get("max_price")
    if wine.price is not None and isinstance(budget, int | float) and wine.price <= budget:
        price = money(wine.price, wine.currency, language)
        found.append(t(REASONS["budget"]).format(price=price))
    if wine.rating_avg is not None and wine.rating_avg >= WELL_RATED:
        found.append(
            t(REASONS["rating"]).format(rating=number(round(wine.rating_avg, 1), language))
        )
    return " ".join(_capital(s) for s in found[:MAX_REASONS])


def intro(asked: Mapping[str, Any], language: str, currency: str) -> str:
    """ "Wines that are red, from France, and at €25.00 or less:", or "" when nothing was
    asked that every card meets."""
    named = wishes(
        {k: v for k, v in asked.items() if k in (*ASKED, "max_price")}, language, currency
    )
    return translator(language)(INTRO).format(wishes=named) if named else ""


def closing(language: str) -> str:
    return translator(language)(CLOSING)


def _food(wine: Wine, food: Any) -> str | None:
    if not isinstance(food, str) or not food:
        return None
    wanted = fold(food)
    pairs = [fold(p) for p in wine.food_pairings]
    return wanted if any(wanted in p or p in wanted for p in pairs) else None


def _meets(wine: Wine, key: str, value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    folded = {fold(str(v)) for v in values}
    if key in ("type", "types"):
        return fold(wine.type) in folded
    if key == "sweetness":
        return fold(wine.sweetness or "") in folded
    if key == "grape":
        return any(fold(g) in folded for g in wine.grapes)
    if key == "region":
        return fold(wine.region or "") in folded
    return fold(wine.country or "") in folded


def _first_sentence(text: str) -> str:
    """The model's first sentence, when it is a whole one of a few words; a stub ("Dr.", "är
    en smidig.") says nothing."""
    first = SENTENCE.split(text.strip(), maxsplit=1)[0].strip()
    if _unspaced(first):
        return first
    whole = bool(first) and first[-1] in ".!?" and len(first.split()) >= MIN_WORDS
    return first if whole else ""


def _unspaced(text: str) -> bool:
    """Chinese and Japanese write a whole sentence without spaces."""
    return len(text) >= 8 and text[-1] in "。！？" and " " not in text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
