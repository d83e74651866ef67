"""What a dish is made of, as the catalog's food words, from a table (lexicon/food_words.toml):
food words of the languages with no word list of their own, and home dishes of every cuisine
whose name says nothing of their meat. A fact the words state, which no plan may change."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib import resources

from sommelier.catalog.lexicon import Match, Phrases, fold, unspaced
from sommelier.i18n.languages import COVERED

STEM_FROM = 6  # a one-word name this long takes case endings: "lohikeiton", "каварму"
VOWELS = frozenset("aeiouyаеиоуыэюяєіїαεηιουω")  # folded: a declension changes the last
HANGUL = re.compile(r"[\uac00-\ud7a3]")  # Korean writes its particles on: "닭갈비에"
# Words written on before a Hebrew or Arabic noun: "and", "the", "for", "with"
# ("לשקשוקה", "بالدجاج").
PREFIXES = {
    re.compile(r"^[\u0590-\u05ff]"): ("ו", "ה", "ב", "כ", "ל", "מ", "ש", "וה", "לה", "וב"),
    re.compile(r"^[\u0600-\u06ff]"): ("ال", "و", "ب", "ل", "بال", "وال", "لل", "مع ال"),
}


THAI = re.compile(r"[\u0e00-\u0e7f]")
# Folded, a Thai word loses its vowel and tone marks: "กุ้ง" (shrimp) is "กง", which stands in
# "แกง" (curry), and a beef massaman curry was read as shellfish (unseen55).
THAI_LETTERS = 3


@cache
def _table(section: str) -> Phrases:
    path = resources.files("sommelier.catalog").joinpath("lexicon/food_words.toml")
    table = tomllib.loads(path.read_text())[section]
    return Phrases.of(
        (form, food)
        for food, words in table.items()
        for word in words
        for form in _forms(word)
        if not (THAI.search(form) and len(form.rstrip("*")) < THAI_LETTERS)
    )


def _forms(word: str) -> Iterator[str]:
    """A table's word as the text may write it: with its case endings, or a word written on."""
    yield _stem(fold(word))
    for script, prefixes in PREFIXES.items():
        if script.search(word):
            yield from (p + word for p in prefixes)


def _stem(word: str) -> str:
    """One word of a spaced script as the start of the words it becomes: "pljeskavic*" for
    "pljeskavici", "pörkölt*" for "pörköltet", "닭갈비*" for "닭갈비에"; a short word as it is
    ("sate" is no "satellite")."""
    if " " in word or word.endswith("*") or unspaced(word):
        return word
    if HANGUL.search(word):
        return f"{word}*"
    if word[-1] in VOWELS:
        return f"{word[:-1]}*" if len(word) >= STEM_FROM else word
    return f"{word}*" if len(word) >= STEM_FROM - 1 else word


def named(folded: str, language: str) -> Match | None:
    """The first dish or food word the (folded) text names, the food its value: a dish in any
    language, a food word only in a language whose own list does not read it. A food word
    right after a dish names what it is made of ("sate kambing" is a goat satay, and "sate"
    alone chicken)."""
    dishes = list(_table("dishes").find(folded))
    words = list(_table("words").find(folded)) if language not in COVERED else []
    for dish in dishes:
        made_of = next((w for w in words if 0 <= w.start - dish.end <= 1), None)
        if made_of is not None:
            return made_of
    found = dishes + words
    return min(found, key=lambda m: (m.start, -m.end)) if found else None
