"""Catalog filters read from a person's own words, where the words are unambiguous.

Small models fill search arguments sloppily: they invent a country nobody mentioned, put prose
into `food`, or miss "under 20 euros". So the words decide: colour or style, country (also
"Portuguese"), region and grape names the catalog knows, foods, "under N", "cheaper". What the
model wrote is kept only where the person's words support it (see tool_arguments.py).
Pure functions; the catalog's own names come in as a `Names` value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from sommelier.catalog.vocabulary import (
    BODY_ALIASES,
    COUNTRY_ALIASES,
    FOOD_ALIASES,
    GRAPE_ALIASES,
    SWEETNESS_ALIASES,
    fold,
)

TYPE_WORDS = {
    "red": "red", "reds": "red", "white": "white", "whites": "white", "rose": "rosé",
    "roses": "rosé", "pink": "rosé", "blush": "rosé", "rosado": "rosé", "sparkling": "sparkling",
    "bubbly": "sparkling", "bubbles": "sparkling", "fizz": "sparkling", "champagne": "sparkling",
    "prosecco": "sparkling", "cava": "sparkling", "cremant": "sparkling", "dessert": "dessert",
    "sweet wine": "dessert", "port": "fortified", "sherry": "fortified", "madeira": "fortified",
    "fortified": "fortified", "toast": "sparkling",
}  # fmt: skip
# "red meat", "white fish": colour words that name food, not wine.
NOT_A_TYPE = re.compile(r"^\s*(meat|sauce|fish|pepper|onion|cabbage|curry|fruit|berr)")
COUNTRIES = {
    c: c
    for c in (
        "france", "italy", "spain", "portugal", "germany", "austria", "united states",
        "argentina", "chile", "australia", "new zealand", "south africa", "hungary", "greece",
        "lebanon", "canada", "brazil", "uruguay", "georgia", "israel", "switzerland", "romania",
        "slovenia", "croatia", "moldova", "bulgaria", "england", "mexico", "china", "japan",
    )
}  # fmt: skip
DEMONYMS = {
    "french": "france", "italian": "italy", "spanish": "spain", "portuguese": "portugal",
    "german": "germany", "austrian": "austria", "american": "united states",
    "californian": "united states", "argentinian": "argentina", "argentine": "argentina",
    "chilean": "chile", "australian": "australia", "aussie": "australia",
    "kiwi": "new zealand", "south african": "south africa", "hungarian": "hungary",
    "greek": "greece", "lebanese": "lebanon", "canadian": "canada", "brazilian": "brazil",
    "uruguayan": "uruguay", "georgian": "georgia", "israeli": "israel", "swiss": "switzerland",
}  # fmt: skip
FOODS = {
    **FOOD_ALIASES, "beef": "beef", "ribeye": "beef", "rib eye": "beef", "sirloin": "beef",
    "brisket": "beef", "lamb": "lamb", "pork": "pork", "ham": "pork", "poultry": "poultry",
    "fish": "fish", "shellfish": "shellfish", "cheese": "cheese", "pasta": "pasta",
    "pizza": "pizza", "dessert": "dessert", "barbecue": "barbecue", "grill": "barbecue",
    "mushroom": "mushrooms", "mushrooms": "mushrooms", "vegetarian": "vegetarian",
    "game": "game", "sushi": "shellfish", "spicy": "spicy", "thai": "spicy", "indian": "spicy",
    "oyster": "shellfish", "crab": "shellfish", "veal": "veal", "appetizers": "appetizer",
    "snacks": "snack", "red meat": "beef", "white fish": "lean fish",
}  # fmt: skip
SWEETNESS_WORDS = {**SWEETNESS_ALIASES, "dry": "dry", "sweet": "sweet", "off-dry": "off-dry"}
BODY_WORDS = {
    **BODY_ALIASES, "light": "light", "light-bodied": "light", "medium-bodied": "medium",
    "full bodied": "full", "full-bodied": "full", "rich": "full", "powerful": "full",
}  # fmt: skip
CHEAP = re.compile(r"\b(cheap|inexpensive|budget|bargain|affordable|everyday)\b")
CHEAPER = re.compile(r"\b(cheaper|less expensive|more affordable|lower price|too expensive)\b")
PRICIER = re.compile(r"\b(pricier|more expensive|fancier|splurge|more special|upscale)\b")
OTHER = re.compile(r"\b(different|another|others?|else|alternatives?|instead|more options)\b")
NEGATION = re.compile(
    r"\b(?:no|not|don'?t (?:want|like|drink)|dislike|hate|avoid|without|except|never|nothing)"
    r"\s+(?:from\s+|any\s+|a\s+|the\s+)?$"
)
# Read from folded text with currency signs removed ("under €20" is "under 20").
NUMBER = r"(\d+(?:[.,]\d+)?)"
MONEY = r"(?:eur(?:os?)?|dollars?|usd|pounds?|gbp|bucks)"
UPPER = r"under|below|less than|max(?:imum)?|up to|at most|no more than|within|cheaper than"
PRICE_PATTERNS = (
    ("max", re.compile(rf"\b(?:{UPPER})\s*{NUMBER}")),
    ("max", re.compile(rf"\b{NUMBER}(?:\s*{MONEY})?\s*(?:or less|or under|max\b|tops\b)")),
    ("min", re.compile(rf"\b(?:over|above|more than|at least)\s*{NUMBER}")),
    (
        "around",
        re.compile(rf"\b(?:around|about|roughly|budget (?:of|is)|for)\s*{NUMBER}\s*{MONEY}\b"),
    ),
    ("range", re.compile(rf"\bbetween\s*{NUMBER}\s*(?:and|-)\s*{NUMBER}")),
)
WINE_WORDS = re.compile(
    r"\b(wines?|bottles?|vino|grapes?|vintage|sommelier|pair(?:ing|s)?|goes? with|go with|"
    r"drink|recommend|suggest|pick|gift|toast|celebrat\w*|dinner|bbq|cheers|glass|open|pour|"
    r"uncork)\b"
)
REFERENCE = re.compile(
    r"\b(more about|tell me more|the (?:first|second|third|last|1st|2nd|3rd) one|that one|"
    r"this one|which of (?:those|these|them))\b"
)
ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}


@dataclass(frozen=True)
class Names:
    """What the catalog holds, folded: country, region and grape names."""

    countries: frozenset[str] = frozenset()
    regions: frozenset[str] = frozenset()
    grapes: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Wanted:
    """What the person's words ask for."""

    filters: dict[str, object] = field(default_factory=dict)
    excluded_types: frozenset[str] = frozenset()
    excluded_countries: frozenset[str] = frozenset()
    cheaper: bool = False
    pricier: bool = False
    other: bool = False  # "something different", "another one"
    wine_words: bool = False  # the words are about wine at all
    reference: bool = False  # "tell me more about the first one"
    ordinal: int | None = None

    @property
    def subject(self) -> bool:
        """Whether the words set their own subject (a style, a food, a grape or a place)."""
        return any(k in self.filters for k in ("type", "food", "grape", "country", "region"))


@dataclass(frozen=True)
class Vocabulary:
    """Words or phrases and what each means, matched by one compiled pattern: a longer phrase
    wins over the words inside it, a plural ("reds", "wines") counts."""

    values: Mapping[str, str]
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, words: Mapping[str, str] | frozenset[str]) -> Vocabulary:
        values = words if isinstance(words, Mapping) else {w: w for w in words}
        keys = sorted(
            (w for w in values if len(w) >= 3 or w in ("nz", "uk")), key=len, reverse=True
        )
        body = "|".join(re.escape(k) for k in keys) or "(?!)"
        return cls(values, re.compile(rf"\b({body})(?:s|es)?\b"))


@lru_cache(maxsize=32)
def _vocabulary(words: frozenset[tuple[str, str]]) -> Vocabulary:
    return Vocabulary.of(dict(words))


def vocabulary(words: Mapping[str, str] | frozenset[str]) -> Vocabulary:
    """The compiled vocabulary of `words`, built once per distinct set of words."""
    values = words if isinstance(words, Mapping) else {w: w for w in words}
    return _vocabulary(frozenset(values.items()))


def _found(
    text: str, words: Mapping[str, str] | frozenset[str] | Vocabulary
) -> list[tuple[int, int, str, bool]]:
    """(start, end, value, negated) for each known word or phrase in folded `text` (a plural
    too), in the order they appear; a longer phrase wins over the words inside it."""
    known = words if isinstance(words, Vocabulary) else _constant(words)
    found = []
    for match in known.pattern.finditer(text):
        start, end = match.span()
        negated = bool(NEGATION.search(text[:start][-30:]))
        found.append((start, end, known.values[match.group(1)], negated))
    return found


_CONSTANTS: dict[int, tuple[object, Vocabulary]] = {}


def _constant(words: Mapping[str, str] | frozenset[str]) -> Vocabulary:
    """Module-level word lists are compiled once, looked up by identity (cheap per call)."""
    cached = _CONSTANTS.get(id(words))
    if cached is None or cached[0] is not words:
        if len(_CONSTANTS) > 64:
            _CONSTANTS.clear()
        cached = (words, vocabulary(words))
        _CONSTANTS[id(words)] = cached
    return cached[1]


@lru_cache(maxsize=8)
def _catalog_vocabularies(names: Names) -> dict[str, Vocabulary]:
    """The vocabularies that depend on the catalog's names, built once per Names."""
    return {
        "country": vocabulary(
            {**COUNTRIES, **{c: c for c in names.countries}, **COUNTRY_ALIASES, **DEMONYMS}
        ),
        "grape": vocabulary({**{g: g for g in names.grapes}, **GRAPE_ALIASES}),
        "region": vocabulary(names.regions - names.countries),
    }


def _mentions(
    text: str, words: Mapping[str, str] | frozenset[str] | Vocabulary
) -> list[tuple[str, bool]]:
    """(value, negated) for each known word or phrase in `text`, in order."""
    return [(value, negated) for _, _, value, negated in _found(text, words)]


def _types(text: str) -> tuple[list[str], set[str]]:
    wanted, refused = [], set()
    for _, end, value, negated in _found(text, TYPE_WORDS):
        if NOT_A_TYPE.match(text[end:]):
            continue  # "red meat", "white fish"
        (refused.add(value) if negated else wanted.append(value))
    return wanted, refused


def _price(text: str) -> dict[str, float]:
    """Price bounds from words like "under 20 euros", "€30 max", "between 10 and 20"."""
    text = fold(re.sub(r"[€$£]", " ", text))
    for kind, pattern in PRICE_PATTERNS:
        match = pattern.search(text)
        if not match:
            continue
        values = [float(v.replace(",", ".")) for v in match.groups() if v]
        if kind == "max":
            return {"max_price": values[0]}
        if kind == "min":
            return {"min_price": values[0]}
        if kind == "around":
            return {"min_price": round(values[0] * 0.7, 2), "max_price": round(values[0] * 1.3, 2)}
        return {"min_price": min(values), "max_price": max(values)}
    return {"max_price": 15.0} if CHEAP.search(text) else {}


def _first(found: list[tuple[str, bool]]) -> str | None:
    return next((value for value, negated in found if not negated), None)


def read_words(text: str, names: Names = Names()) -> Wanted:
    """The filters a message asks for, in the catalog's terms."""
    folded = fold(text)
    filters: dict[str, object] = {}
    types, refused_types = _types(folded)
    if len(set(types)) == 1:
        filters["type"] = types[0]
    catalog = _catalog_vocabularies(names)
    countries = _mentions(folded, catalog["country"])
    refused_countries = {value for value, negated in countries if negated}
    named = list(dict.fromkeys(value for value, negated in countries if not negated))
    if len(named) == 1:
        filters["country"] = named[0]
    elif named:  # "Hungary or Canada": either
        filters["countries"] = named
    for key, found in (
        ("grape", _mentions(folded, catalog["grape"])),
        ("food", _mentions(folded, FOODS)),
        ("sweetness", _mentions(folded, SWEETNESS_WORDS)),
        ("body", _mentions(folded, BODY_WORDS)),
    ):
        value = _first(found)
        if value:
            filters[key] = value
    regions = [r for r in _mentions(folded, catalog["region"]) if len(r[0]) >= 4]
    if _first(regions):
        filters["region"] = _first(regions)
    filters.update(_price(text))
    ordinal = next((i for w, i in ORDINALS.items() if re.search(rf"\b{w}\b", folded)), None)
    return Wanted(
        filters=filters,
        excluded_types=frozenset(refused_types),
        excluded_countries=frozenset(refused_countries),
        cheaper=bool(CHEAPER.search(folded)),
        pricier=bool(PRICIER.search(folded)),
        other=bool(OTHER.search(folded)),
        wine_words=bool(filters or refused_types or refused_countries or WINE_WORDS.search(folded)),
        reference=bool(REFERENCE.search(folded)),
        ordinal=ordinal,
    )


def is_follow_up(wanted: Wanted) -> bool:
    return wanted.cheaper or wanted.pricier or wanted.other or wanted.reference


def is_wine_request(wanted: Wanted) -> bool:
    return wanted.wine_words or is_follow_up(wanted)


def refused(text: str, names: Names = Names()) -> dict[str, list[str]]:
    """Grapes and regions the words turn down ("I can't stand Chardonnay")."""
    folded = fold(text)
    catalog = _catalog_vocabularies(names)
    grapes = _mentions(folded, catalog["grape"])
    regions = _mentions(folded, catalog["region"])
    return {
        "grape": [value for value, negated in grapes if negated],
        "region": [value for value, negated in regions if negated and len(value) >= 4],
    }


def take_filters(text: str, names: Names = Names()) -> tuple[dict[str, str], str]:
    """Style, body, sweetness, food, grape and country words of free text as filters, and the
    words left: "full bodied red for steak" -> ({"type": "red", "body": "full", "food":
    "beef"}, "for"). A filter is an index walk where the same words as free text rank
    thousands of rows."""
    folded = fold(text)
    taken: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    catalog = _catalog_vocabularies(names)
    words: Mapping[str, str] | Vocabulary
    for key, words in (
        ("body", BODY_WORDS), ("type", TYPE_WORDS), ("sweetness", SWEETNESS_WORDS),
        ("food", FOODS), ("grape", catalog["grape"]), ("country", catalog["country"]),
    ):  # fmt: skip
        found = [f for f in _found(folded, words) if not f[3]]
        if key == "type":
            found = [f for f in found if not NOT_A_TYPE.match(folded[f[1] :])]
        if len({f[2] for f in found}) != 1 or any(
            a < e and s < b for s, e, *_ in found for a, b in spans
        ):
            continue  # none, several ("red or white"), or words another filter took
        taken[key] = found[0][2]
        spans += [(f[0], f[1]) for f in found]
    rest = folded
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return taken, " ".join(rest.split())
