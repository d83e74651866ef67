"""Whether a message names wine, drinking or a meal in a language without a word list of its
own, from a short table (lexicon/topic_words.toml): positive evidence that it is on the
sommelier's subject, which no plan overrules."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

from sommelier.catalog.lexicon import Phrases


@cache
def _words() -> Phrases:
    path = resources.files("sommelier.catalog").joinpath("lexicon/topic_words.toml")
    table = tomllib.loads(path.read_text())
    return Phrases.of((word, kind) for kind, words in table.items() for word in words)


def on_the_subject(folded: str) -> bool:
    """Whether the (folded) text names wine, drinking or a meal in one of the table's
    languages."""
    return folded in _words()
