"""The fixed words around a reply, in the person's language: a card's style, place and price,
and the line that says which wish a search had to give up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sommelier.catalog.search import place_of
from sommelier.db.models import Wine
from sommelier.i18n.translations import N_, country, money, number, plural, translator

TYPES = {
    "red": N_("red"),
    "white": N_("white"),
    "rosé": N_("rosé"),
    "sparkling": N_("sparkling"),
    "dessert": N_("dessert wine"),
    "fortified": N_("fortified"),
}
SWEETNESS = {
    "dry": N_("dry"),
    "off-dry": N_("off-dry"),
    "medium-sweet": N_("medium-sweet"),
    "sweet": N_("sweet"),
}
BODIES = {
    "very light": N_("very light body"),
    "light": N_("light body"),
    "medium": N_("medium body"),
    "full": N_("full body"),
    "very full": N_("very full body"),
}


def style_label(wine: Wine, language: str) -> str:
    """ "red, dry, full body" in the person's language."""
    t = translator(language)
    parts = [
        t(TYPES[wine.type]) if wine.type in TYPES else wine.type,
        t(SWEETNESS[wine.sweetness]) if wine.sweetness in SWEETNESS else wine.sweetness,
        t(BODIES[wine.body]) if wine.body in BODIES else wine.body,
    ]
    return ", ".join(p for p in parts if p)


def place_label(wine: Wine, language: str) -> str | None:
    """ "Douro, Portugal" with the country named in the person's language."""
    if wine.country is None:
        return place_of(wine)
    named = country(wine.country, language)
    return ", ".join(p for p in (wine.region, named) if p)


def rating_label(rating: float | None, count: int, language: str | None) -> str:
    """ "★ 4.2 (1,200 ratings)" in the person's language, with its plural."""
    if rating is None:
        return ""
    ratings = plural(language, "{count} rating", "{count} ratings", count)
    return f"★ {number(rating, language)} ({ratings.format(count=number(count, language))})"


def price_label(wine: Wine, language: str) -> str | None:
    return None if wine.price is None else money(wine.price, wine.currency, language)


RELAXED = {
    "country": N_("No wines from {value} in the catalog."),
    "countries": N_("No wines from {value} in the catalog."),
    "region": N_("No wines from {value} in the catalog."),
    "grape": N_("No {value} in the catalog."),
    "type": N_("No wines of the style “{value}” in the catalog."),
    "types": N_("No wines of the style “{value}” in the catalog."),
    "sweetness": N_("Nothing of that sweetness in the catalog."),
    "max_price": N_("Nothing at {value} or less."),
    "min_price": N_("Nothing above {value}."),
}
CLOSEST = N_("Here are the closest matches.")
# Above cards whose every sentence was false and dropped: the cards still show their facts.
FOUND = N_("Here is what I found in the catalog.")


def found_intro(language: str) -> str:
    return translator(language)(FOUND)


OFFER = N_(
    "I don't have a good answer to that one. Tell me what you're eating or celebrating, and "
    "I'll find you a wine."
)


def offer_line(language: str) -> str:
    return translator(language)(OFFER)


def relaxed_notice(relaxed: Mapping[str, Any], language: str, currency: str) -> str:
    """What a search gave up, said plainly: "No wines from Georgia in the catalog. Here are
    the closest matches." Empty when nothing worth saying was given up (free text only)."""
    t = translator(language)
    said = []
    for key, value in relaxed.items():
        template = RELAXED.get(key)
        if template is None:
            continue
        shown = _value(key, value, language, currency)
        sentence = t(template).format(value=shown)
        if sentence not in said:
            said.append(sentence)
    return " ".join([*said, t(CLOSEST)]) if said else ""


def _value(key: str, value: Any, language: str, currency: str) -> str:
    t = translator(language)
    if key in ("country", "countries"):
        values = value if isinstance(value, list) else [value]
        return t(N_(" or ")).join(country(str(v), language) for v in values)
    if key in ("min_price", "max_price"):
        return money(float(value), currency, language)
    if key in ("type", "types"):
        values = value if isinstance(value, list) else [value]
        return t(N_(" or ")).join(t(TYPES.get(str(v), str(v))) for v in values)
    return str(value).title()
