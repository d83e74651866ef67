"""The words people use for wine, per language, as data (`lexicon/<language>.toml`), and the
matchers compiled from them.

Country names in every language come from CLDR (babel), for the countries that make wine;
the files add only adjectives and nicknames ("französisch", "Aussie"). Everything is compared
in `fold`ed form: lower case and without accents, each script kept (a Cyrillic word never
matches a Latin one by transliteration: "но" is not "no").
"""

from __future__ import annotations

import contextlib
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from babel import Locale, UnknownLocaleError

from sommelier.i18n.languages import COVERED

KINDS = ("type", "sweetness", "body", "food", "country")
# Territories that make wine: their CLDR names are read in every language (a wider list would
# turn "Chad" or "Jersey" into countries).
WINE_TERRITORIES = (
    "FR IT ES PT DE AT US AR CL AU NZ ZA HU GR LB CA GE GB IL CH BR UY RO MD BG HR SI RS MK CZ "
    "SK MX TR AM RU UA CY MT LU PE CN JP IN MA TN DZ"
).split()
# Languages whose nouns take case endings: a country name matches with any ending.
INFLECTED = ("ru", "uk", "pl")
# Letters no decomposition takes apart; Turkish writes "ı" where a keyboard without it writes
# "i" ("kuralları" and "kurallari" are one word to a reader).
_LIGATURES = str.maketrans(
    {"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d", "ß": "ss", "ı": "i"}
)
_APOSTROPHES = str.maketrans({"’": "'", "`": "'", "´": "'", "ʼ": "'"})
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Lower case, accents off, apostrophes straight, single spaces; scripts kept."""
    text = text.casefold().translate(_LIGATURES).translate(_APOSTROPHES)
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    # Composed again: Hangul decomposes into letters that are no combining marks, and "3만원"
    # must still be three and ten thousand won.
    return _SPACES.sub(" ", unicodedata.normalize("NFC", bare)).strip()


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    value: Any
    phrase: str


@dataclass(frozen=True)
class Phrases:
    """Phrases and what each means, matched as whole words in folded text by one pattern: the
    longest phrase wins over the words inside it; "word*" matches any word it starts."""

    values: Mapping[str, Any]
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, Any]]) -> Phrases:
        values: dict[str, Any] = {}
        for phrase, value in pairs:
            key = fold(phrase)
            if key and key not in values:
                values[key] = value
        body = "|".join(_piece(k) for k in sorted(values, key=len, reverse=True)) or "(?!)"
        return cls(values, re.compile(body))

    def find(self, text: str) -> Iterator[Match]:
        for match in self.pattern.finditer(text):
            phrase = match.group(0)
            yield Match(match.start(), match.end(), self._value(phrase), phrase)

    def _value(self, phrase: str) -> Any:
        if phrase in self.values:
            return self.values[phrase]
        stems = (k for k in self.values if k.endswith("*") and phrase.startswith(k[:-1]))
        return self.values[max(stems, key=len)]

    def __contains__(self, text: str) -> bool:
        return self.pattern.search(text) is not None


def _piece(phrase: str) -> str:
    """One phrase as a whole word; in a script written without spaces between words (Chinese,
    Japanese: "3000円くらい") a phrase stands wherever it is written."""
    if unspaced(phrase):
        return re.escape(phrase)
    # A digit may stand right before a phrase: "20euros", "3만원" (Korean writes them together).
    head = r"(?<![^\W\d])"
    if phrase.endswith("*"):
        return head + re.escape(phrase[:-1]) + r"\w*"
    tail = "" if phrase.endswith("'") or not phrase[-1].isalnum() else r"(?![\w])"
    return head + re.escape(phrase) + tail


def unspaced(phrase: str) -> bool:
    """Whether a phrase is written in a script without spaces between words (Japanese kana,
    CJK ideographs, Thai)."""
    return all(
        "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\u0e00" <= ch <= "\u0e7f"
        for ch in phrase.rstrip("*")
    )


@dataclass(frozen=True)
class Lexicon:
    """One language's words: what each kind of filter's words mean, and the marker words."""

    language: str
    kinds: Mapping[str, Mapping[str, tuple[str, ...]]]
    words: Mapping[str, tuple[str, ...]]
    ordinals: Mapping[str, tuple[str, ...]]
    price: Mapping[str, tuple[str, ...]]
    amounts: Mapping[str, tuple[float, str]]
    numbers: Mapping[str, tuple[str, ...]]
    currencies: Mapping[str, tuple[str, ...]]
    countries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # from CLDR
    # English wine words that are ordinary words in this language ("pour" is French for "for").
    false_friends: tuple[str, ...] = ()

    def all_words(self) -> Iterator[str]:
        for values in self.kinds.values():
            for phrases in values.values():
                yield from phrases
        for group in (self.words, self.ordinals, self.price, self.numbers, self.currencies):
            for phrases in group.values():
                yield from phrases


def beside(language: str) -> tuple[Lexicon, ...]:
    """The lexicons a message in `language` is read with: its own, then English (wine's
    lingua franca) less the words that mean something else in `language`."""
    own = lexicon(language)
    if own.language == "en":
        return (own,)
    return own, _english_without(own.false_friends)


@cache
def _english_without(words: tuple[str, ...]) -> Lexicon:
    english = lexicon("en")
    if not words:
        return english
    drop = {fold(w) for w in words}

    def kept(phrases: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        return {k: tuple(p for p in v if fold(p) not in drop) for k, v in phrases.items()}

    kinds = {kind: kept(values) for kind, values in english.kinds.items()}
    return replace(english, kinds=kinds, words=kept(english.words))


@cache
def lexicon(language: str) -> Lexicon:
    """The lexicon of a covered language (English for any other)."""
    language = language if language in COVERED else "en"
    text = resources.files("sommelier.catalog").joinpath(f"lexicon/{language}.toml").read_text()
    data = tomllib.loads(text)
    kinds = {kind: _lists(data.get(kind, {})) for kind in KINDS}
    countries = cldr_countries(language)
    return Lexicon(
        language=language,
        kinds=kinds,
        words=_lists(data.get("words", {})),
        ordinals=_lists(data.get("ordinal", {})),
        price=_lists(data.get("price", {})),
        amounts={k: (float(v[0]), str(v[1])) for k, v in data.get("amount", {}).items()},
        numbers=_lists(data.get("number", {})),
        currencies=_lists(data.get("currency", {})),
        countries=countries,
        false_friends=tuple(str(w) for w in data.get("false_friends", ())),
    )


@cache
def appellations() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern over folded text, country) for the styles named for their place: "cava" is
    Spanish in every language (lexicon/appellations.toml)."""
    path = resources.files("sommelier.catalog").joinpath("lexicon/appellations.toml")
    found = []
    for country, words in tomllib.loads(path.read_text())["origin"].items():
        stems = (re.escape(fold(w.rstrip("*"))) + r"\w*" * w.endswith("*") for w in words)
        found.append((re.compile(rf"(?<!\w)(?:{'|'.join(stems)})(?!\w)"), str(country)))
    return tuple(found)


def origin_of(style: str) -> str | None:
    """The country a style word ("cava", "портвейна") names, or None."""
    return next((c for pattern, c in appellations() if pattern.fullmatch(fold(style))), None)


def origin_in(text: str) -> str | None:
    """The country of the first style named for its place within `text` ("vinho do Porto")."""
    folded = fold(text)
    return next((c for pattern, c in appellations() if pattern.search(folded)), None)


def _lists(table: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    return {str(key): tuple(str(v) for v in values) for key, values in table.items()}


@cache
def cldr_countries(language: str) -> dict[str, tuple[str, ...]]:
    """English country key ("united states") → its names in `language`, from CLDR."""
    english = Locale.parse("en").territories
    local = Locale.parse(language).territories
    names: dict[str, tuple[str, ...]] = {}
    for code in WINE_TERRITORIES:
        key = fold(english[code])
        found = {english[code], local.get(code, english[code])}
        if language in INFLECTED:
            found |= {_stem(name) for name in found}
        names[key] = tuple(sorted(found))
    return names


def _stem(name: str) -> str:
    """ "Италия" → "итали*" (Италии, Италию); short names stay whole."""
    word = fold(name)
    if len(word) >= 5 and " " not in word and word[-1] in "аяоеиыйьуюa":
        return word[:-1] + "*"
    return word


@cache
def country_names(language: str) -> dict[str, str]:
    """Every way `language` (and English) names a wine country → its English key. A language
    without a word list names them as CLDR does ("Francie", "意大利", "Hiszpania")."""
    pairs: dict[str, str] = {}
    for code in dict.fromkeys(("en", language)):
        words = lexicon(code)
        for key, names in words.countries.items():
            pairs.update({name: key for name in names})
        for key, names in words.kinds["country"].items():
            pairs.update({name: key for name in names})
    if language not in COVERED:
        for key, names in _known_countries(language).items():
            pairs.update({_long_stem(name): key for name in names})
    return pairs


def _known_countries(language: str) -> dict[str, tuple[str, ...]]:
    try:
        return cldr_countries(language)
    except (ValueError, UnknownLocaleError):
        return {}  # a code CLDR does not know: English names only


# A name longer than this stands for its stem: a case ending may follow ("z Hiszpanii",
# "з Португалії"), or an adjective's ("espanjalaista", "italienskt").
STEM_AFTER = 5


def _long_stem(name: str) -> str:
    """A long one-word name in a spaced script as its stem ("hiszpani*"); others as they are."""
    word = fold(name)
    if len(word) > STEM_AFTER and " " not in word and not unspaced(word):
        return word[:-1] + "*"
    return word


@cache
def broader_regions() -> dict[str, tuple[str, ...]]:
    """Each catalog region (folded) → the broader regions it lies in (lexicon/regions.toml)."""
    path = resources.files("sommelier.catalog").joinpath("lexicon/regions.toml")
    table = tomllib.loads(path.read_text())["within"]
    return {fold(k): tuple(fold(v) for v in values) for k, values in table.items()}


@cache
def narrower_regions() -> dict[str, tuple[str, ...]]:
    """Each broader region (folded: "loire", "rhone", "tuscany") → the catalog regions in it:
    a person asks for "un blanc de la Loire" and the catalog says Sancerre."""
    found: dict[str, list[str]] = {}
    for region, broader in broader_regions().items():
        for name in broader:
            found.setdefault(name, []).append(region)
    return {name: tuple(regions) for name, regions in found.items()}


@cache
def negation_words(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(words that turn down what follows, words that turn down what precedes) in a language
    without a word list (lexicon/negation_words.toml); empty for the covered ones."""
    if language in COVERED:
        return (), ()
    path = resources.files("sommelier.catalog").joinpath("lexicon/negation_words.toml")
    data = tomllib.loads(path.read_text())
    before = tuple(fold(w) for w in data["before"].get(language, ()))
    return before, tuple(fold(w) for w in data["after"].get(language, ()))


@cache
def territory_names(country: str, language: str) -> tuple[str, ...]:
    """How CLDR names the country `country` (an English name) in `language` and in English,
    folded: "spain" in Swedish is "spanien" (for a language with no word list)."""
    english = Locale.parse("en").territories
    code = next((c for c, n in english.items() if fold(str(n)) == fold(country)), None)
    if code is None:
        return (fold(country),)
    names = {fold(str(english[code]))}
    with contextlib.suppress(ValueError, UnknownLocaleError):
        names.add(fold(str(Locale.parse(language).territories.get(code, english[code]))))
    return tuple(sorted(names))
