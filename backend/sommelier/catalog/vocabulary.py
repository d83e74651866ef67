"""Controlled values and the aliases people use for them.

Everything is compared in folded form (ASCII, lower case, single spaces), so "Rosé", "rose" and
"ROSE" are the same word, and aliases map common names onto the catalog's own.
"""

from __future__ import annotations

import re

from sommelier.catalog.lexicon import fold

WINE_TYPES = ("red", "white", "rosé", "sparkling", "dessert", "fortified")
SWEETNESS = ("dry", "off-dry", "medium-sweet", "sweet")
BODIES = ("very light", "light", "medium", "full", "very full")
ACIDITY = ("low", "medium", "high")


def style_key(wine_type: str, body: str | None, sweetness: str | None) -> str:
    """A style as the data tables name their rows (chat/data/knowledge.toml,
    cellar/data/drink_windows.toml): "red full", "white light", "fortified sweet", "rosé"."""
    if wine_type in ("red", "white"):
        level = BODIES.index(body) + 1 if body in BODIES else 3
        return f"{wine_type} {'light' if level <= 2 else 'medium' if level == 3 else 'full'}"
    if wine_type == "fortified":
        return f"fortified {'sweet' if sweetness in ('sweet', 'medium-sweet') else 'dry'}"
    return wine_type if wine_type in WINE_TYPES else "red medium"


TYPE_ALIASES = {
    "rose": "rosé",
    "rosado": "rosé",
    "rosato": "rosé",
    "pink": "rosé",
    "blush": "rosé",
    "bubbly": "sparkling",
    "fizz": "sparkling",
    "sparkling wine": "sparkling",
    "espumante": "sparkling",
    "spumante": "sparkling",
    "sweet": "dessert",
    "port": "fortified",
    "dessert/port": "fortified",
    "sherry": "fortified",
    "madeira": "fortified",
}

SWEETNESS_ALIASES = {
    "bone dry": "dry",
    "brut": "dry",
    "off dry": "off-dry",
    "offdry": "off-dry",
    "semi-dry": "off-dry",
    "medium dry": "off-dry",
    "medium sweet": "medium-sweet",
    "semi-sweet": "medium-sweet",
    "semi sweet": "medium-sweet",
    "demi-sec": "medium-sweet",
}

BODY_ALIASES = {
    "very light-bodied": "very light",
    "light-bodied": "light",
    "medium-bodied": "medium",
    "full-bodied": "full",
    "very full-bodied": "very full",
    "heavy": "full",
    "bold": "full",
    "big": "full",
}

COUNTRY_ALIASES = {
    "usa": "united states",
    "us": "united states",
    "u.s.": "united states",
    "u.s.a.": "united states",
    "america": "united states",
    "united states of america": "united states",
    "uk": "united kingdom",
    "england": "united kingdom",
    "britain": "united kingdom",
    "great britain": "united kingdom",
    "deutschland": "germany",
    "espana": "spain",
    "italia": "italy",
    "nz": "new zealand",
    "rsa": "south africa",
}

GRAPE_ALIASES = {
    "shiraz": "syrah",
    "garnacha": "grenache",
    "cannonau": "grenache",
    "pinot grigio": "pinot gris",
    "grauburgunder": "pinot gris",
    "spatburgunder": "pinot noir",
    "pinot nero": "pinot noir",
    "monastrell": "mourvedre",
    "mataro": "mourvedre",
    "primitivo": "zinfandel",
    "tinta roriz": "tempranillo",
    "tinto fino": "tempranillo",
    "aragonez": "tempranillo",
    "moscato": "muscat",
    "moscatel": "muscat",
    "muscat/moscato": "muscat",
    "sauv blanc": "sauvignon blanc",
    "cab sauv": "cabernet sauvignon",
    "cab": "cabernet sauvignon",
    "cabernet": "cabernet sauvignon",
    "carignane": "carignan",
    "carinena": "carignan",
    "mazuelo": "carignan",
    "albarino": "albarino",
    "alvarinho": "albarino",
}

FOOD_ALIASES = {
    "steak": "beef",
    "burger": "beef",
    "chicken": "poultry",
    "turkey": "poultry",
    "duck": "poultry",
    "salmon": "rich fish",
    "tuna": "rich fish",
    "cod": "codfish",
    "seafood": "shellfish",
    "oysters": "shellfish",
    "shrimp": "shellfish",
    "lobster": "shellfish",
    "bbq": "barbecue",
    "venison": "game",
    "game meat": "game",
    "curry": "spicy",
    "spicy food": "spicy",
    "vegetables": "vegetarian",
    "veggie": "vegetarian",
    "chocolate": "dessert",
    "cake": "dessert",
}


def canonical(value: str, aliases: dict[str, str]) -> str:
    folded = fold(value)
    return fold(aliases.get(folded, folded))


def canonical_grape(value: str) -> str:
    return canonical(value, GRAPE_ALIASES)


def canonical_country(value: str) -> str:
    return canonical(value, COUNTRY_ALIASES)


def canonical_food(value: str) -> str:
    return canonical(value, FOOD_ALIASES)


def canonical_choice(value: str, choices: tuple[str, ...], aliases: dict[str, str]) -> str | None:
    """The controlled value `value` names, or None when it names none."""
    folded = fold(value)
    folded = aliases.get(folded, folded)
    for choice in choices:
        if fold(choice) == fold(folded):
            return choice
    return None


# Words of free text that every wine would match or that say nothing about wine.
STOPWORDS = frozenset(
    """a an and any are as at be but by can for from give good have i in is it like me my
    nice of on or please recommend some something that the this to under over wine wines
    with would want looking need bottle bottles euros euro dollars usd eur""".split()
)


def query_groups(text: str) -> list[list[str]]:
    """Search terms of free text, one group per word: the word (folded, stop words out) and
    its aliases ("shiraz" -> ["shiraz", "syrah"]). A multi-word alias is a group of its own
    ("pinot grigio" -> ["pinot", "gris"] as alternatives). A match needs one term of a group."""
    folded = fold(text)
    groups: list[list[str]] = []
    maps = (GRAPE_ALIASES, COUNTRY_ALIASES, TYPE_ALIASES, FOOD_ALIASES)
    for alias_map in maps:
        for alias, target in alias_map.items():
            if " " in alias and alias in folded:
                groups.append(re.findall(r"[a-z0-9]+", fold(target)))
    for word in re.findall(r"[a-z0-9]+", folded):
        if word in STOPWORDS or len(word) < 2:
            continue
        group = [word]
        for alias_map in maps:
            if word in alias_map:
                group += re.findall(r"[a-z0-9]+", fold(alias_map[word]))
        groups.append(list(dict.fromkeys(group)))
    unique: dict[tuple[str, ...], list[str]] = {tuple(g): g for g in groups if g}
    return list(unique.values())
