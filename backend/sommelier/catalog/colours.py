"""The colour and the sweetness a message names in a language without a word list of its own,
from short tables (lexicon/colour_words.toml, lexicon/sweetness_words.toml): the person's wish,
which no plan may change."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

from sommelier.catalog.lexicon import Phrases
from sommelier.catalog.vocabulary import WINE_TYPES

# Scripts written without spaces: a word of theirs counts wherever it stands.
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\u0e00-\u0e7f]")


@cache
def _table() -> dict[str, re.Pattern[str]]:
    path = resources.files("sommelier.catalog").joinpath("lexicon/colour_words.toml")
    found = {}
    for colour, words in tomllib.loads(path.read_text()).items():
        kind = "rosé" if colour == "rose" else colour
        assert kind in WINE_TYPES, colour
        alternatives = "|".join(
            re.escape(w) if UNSPACED.search(w) else rf"(?<!\w){re.escape(w)}" for w in words
        )
        found[kind] = re.compile(alternatives)
    return found


def colour_named(folded: str) -> str | None:
    """The one colour the (folded) text names, or None when it names none or several."""
    named = [kind for kind, pattern in _table().items() if pattern.search(folded)]
    return named[0] if len(named) == 1 else None


@cache
def _sweetness() -> Phrases:
    path = resources.files("sommelier.catalog").joinpath("lexicon/sweetness_words.toml")
    table = tomllib.loads(path.read_text())
    return Phrases.of((word, style) for style, words in table.items() for word in words)


def sweetness_named(folded: str) -> str | None:
    """ "sweet" or "dry" when the (folded) text names one of the two, else None."""
    named = {match.value for match in _sweetness().find(folded)}
    return named.pop() if len(named) == 1 else None
