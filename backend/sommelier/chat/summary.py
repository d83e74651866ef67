"""A rule-based summary of what the person wants, for level-2 compaction.

Rule-based on purpose: it runs exactly when the model is failing, so it must not depend on the
model; it is instant, free, deterministic and testable. It reads the person's own messages for
budget, colour, sweetness, food, occasion, and grapes and countries liked or refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sommelier.agent.messages import Message, is_person, text_of
from sommelier.catalog.vocabulary import (
    COUNTRY_ALIASES,
    FOOD_ALIASES,
    TYPE_ALIASES,
    WINE_TYPES,
    fold,
)

COLOURS = ({fold(t) for t in WINE_TYPES} | set(TYPE_ALIASES)) - {"sweet"}
SWEETNESS_WORDS = ("bone dry", "off-dry", "off dry", "dry", "semi-sweet", "medium sweet", "sweet")
GRAPE_NAMES = {
    "cabernet sauvignon", "merlot", "pinot noir", "syrah", "shiraz", "grenache", "malbec",
    "tempranillo", "sangiovese", "nebbiolo", "zinfandel", "chardonnay", "sauvignon blanc",
    "riesling", "chenin blanc", "gewurztraminer", "viognier", "albarino", "gruner veltliner",
    "carmenere", "pinotage", "gamay", "mourvedre", "barbera", "pinot grigio", "pinot gris",
    "prosecco", "moscato", "primitivo", "garnacha",
}  # fmt: skip
COUNTRIES = set(COUNTRY_ALIASES) | {
    "france", "italy", "spain", "portugal", "germany", "austria", "united states", "argentina",
    "chile", "australia", "new zealand", "south africa", "hungary", "greece", "lebanon",
    "canada", "brazil", "uruguay",
}  # fmt: skip
FOODS = set(FOOD_ALIASES) | {
    "beef", "lamb", "pork", "poultry", "fish", "shellfish", "cheese", "pasta", "pizza",
    "dessert", "barbecue", "mushrooms", "vegetarian", "game", "sushi", "spicy",
}  # fmt: skip
OCCASIONS = (
    "birthday", "anniversary", "wedding", "dinner party", "date", "gift", "party", "picnic",
    "christmas", "new year", "celebration", "barbecue", "holiday",
)  # fmt: skip

_BUDGET = re.compile(
    r"(?:under|below|less than|max(?:imum)?|up to|around|about|budget(?: of| is)?)\s*"
    r"(?:[$€£]\s*)?(\d+(?:[.,]\d+)?)\s*(?:[$€£]|euros?|eur|dollars?|usd|pounds?|gbp)?"
    r"|(?:[$€£]\s*)(\d+(?:[.,]\d+)?)|(\d+(?:[.,]\d+)?)\s*(?:[$€£]|euros?|eur|dollars?|usd)",
)
_NEGATION = re.compile(r"\b(?:no|not|don'?t like|dislike|hate|avoid|without|except|never)\s+$")


def _mentions(text: str, words: set[str] | tuple[str, ...]) -> list[tuple[str, bool]]:
    """(word, refused) for each vocabulary word in text; refused when negated just before."""
    found: list[tuple[str, bool]] = []
    for word in sorted(words, key=len, reverse=True):
        for match in re.finditer(rf"\b{re.escape(word)}\b", text):
            before = text[max(0, match.start() - 20) : match.start()]
            found.append((word, bool(_NEGATION.search(before))))
            break
    return found


def summarize_request(messages: Sequence[Message]) -> str:
    raw = [text_of(m).lower() for m in messages if is_person(m)]
    said = [fold(t) for t in raw]
    text = " \n ".join(said)
    lines: list[str] = []
    # Budgets are read before folding, from the words as written.
    budgets = [next(g for g in m.groups() if g) for m in _BUDGET.finditer(" \n ".join(raw))]
    if budgets:
        lines.append(f"budget: about {budgets[-1]} (latest stated)")
    for label, words in (
        ("colour/style", COLOURS),
        ("sweetness", SWEETNESS_WORDS),
        ("food", FOODS),
        ("grapes", GRAPE_NAMES),
        ("countries", COUNTRIES),
    ):
        liked = [w for w, refused in _mentions(text, words) if not refused]
        refused = [w for w, refused in _mentions(text, words) if refused]
        if liked:
            lines.append(f"{label} wanted: {', '.join(liked)}")
        if refused:
            lines.append(f"{label} refused: {', '.join(refused)}")
    occasions = [w for w, _ in _mentions(text, OCCASIONS)]
    if occasions:
        lines.append(f"occasion: {', '.join(occasions)}")
    latest = said[-1] if said else ""
    summary = "\n".join(f"- {line}" for line in lines) or "- no constraints stated yet"
    return (
        "Summary of what the person wants so far (earlier turns were compacted):\n"
        f"{summary}\n- latest request: {latest[:300]}"
    )
