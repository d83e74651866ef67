"""The fixed words around a reply, in the person's language: a card's style, place and price,
and the line that says which wish a search had to give up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from babel.lists import format_list

from sommelier.catalog.search import place_of
from sommelier.db.models import Wine
from sommelier.i18n.translations import N_, country, locale, money, number, plural, translator

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


# The catalog's pairings (folded), as a dish is named in a sentence.
FOODS = {
    "beef": N_("beef"), "lamb": N_("lamb"), "barbecue": N_("barbecue"), "game": N_("game"),
    "appetizer": N_("appetizers"), "shellfish": N_("shellfish"), "poultry": N_("poultry"),
    "cheese": N_("cheese"), "lean fish": N_("lean fish"), "pork": N_("pork"),
    "mushrooms": N_("mushrooms"), "spicy": N_("spicy food"), "vegetarian": N_("vegetarian dishes"),
    "dessert": N_("dessert"), "rich fish": N_("rich fish"), "snack": N_("snacks"),
    "pasta": N_("pasta"), "pizza": N_("pizza"), "fish": N_("fish"),
}  # fmt: skip


# What a notice names, one phrase per wish, joined as the person's language lists things
# ("rosé, from Spain and at €15 or less"): "Nothing in the catalog is …".
WISH = {
    "sweetness": "{value}",
    "type": "{value}",
    "types": "{value}",
    "grape": N_("made from {value}"),
    "region": N_("from {value}"),
    "country": N_("from {value}"),
    "countries": N_("from {value}"),
    "max_price": N_("at {value} or less"),
    "min_price": N_("above {value}"),
}
NOTHING = N_("Nothing in the catalog is {wishes}.")
# After "something cheaper" or "something else" the search leaves out the wines just shown: the
# catalog may hold one that meets every wish, and it is on the cards above.
NOTHING_ELSE = N_("Nothing else in the catalog is {wishes}.")
NOTHING_KEPT = N_("None of your bottles is {wishes}.")  # a search of the person's own cellar
CLOSEST_KEEPING = N_("Here are the closest that are {wishes}.")
CLOSEST = N_("Here are the closest matches.")
# Above cards whose every sentence was false and dropped: the cards still show their facts.
FOUND = N_("Here is what I found in the catalog.")
FOUND_KEPT = N_("Here is what I found in your cellar.")


def found_intro(language: str, cellar: bool = False) -> str:
    return translator(language)(FOUND_KEPT if cellar else FOUND)


OFFER = N_(
    "I don't have a good answer to that one. Tell me what you're eating or celebrating, and "
    "I'll find you a wine."
)


def offer_line(language: str) -> str:
    return translator(language)(OFFER)


def relaxed_notice(
    wanted: Mapping[str, Any],
    relaxed: Mapping[str, Any],
    language: str,
    currency: str,
    others: bool = False,
    *,
    cellar: bool = False,
) -> str:
    """What a search could not meet, said exactly: every wish the person stated that it held
    together ("Nothing in the catalog is rosé, from Spain and at €15 or less."), then what the
    closest wines still are ("Here are the closest that are rosé and at €15 or less."). The
    search proved the first (a subset of these wishes matched nothing); the cards meet the
    second. Empty when nothing the person stated was given up. `others`: the search left out
    the wines already shown ("Nothing else in the catalog is …"); `cellar`: the search was of
    the person's own bottles ("None of your bottles is …")."""
    if not relaxed:
        return ""
    t = translator(language)
    named = wishes(wanted, language, currency)
    if not named:
        return ""
    kept = wishes({k: v for k, v in wanted.items() if k not in relaxed}, language, currency)
    closest = t(CLOSEST_KEEPING).format(wishes=kept) if kept else t(CLOSEST)
    nothing = NOTHING_KEPT if cellar else NOTHING_ELSE if others else NOTHING
    return f"{t(nothing).format(wishes=named)} {closest}"


def wishes(filters: Mapping[str, Any], language: str, currency: str) -> str:
    """The wishes as one phrase in the person's language: "rosé, from Spain and at €15 or
    less" (CLDR's list pattern joins them)."""
    t = translator(language)
    parts = [
        t(WISH[key]).format(value=_value(key, value, language, currency))
        for key in WISH
        if (value := filters.get(key)) not in (None, "", [])
    ]
    return format_list(parts, locale=locale(language)) if parts else ""


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
    if key == "sweetness":
        return t(SWEETNESS.get(str(value), str(value)))
    return str(value).title()
