"""Every word of a reply true of its cards: the prose is checked against the catalog rows of
the wines it talks about.

A `why` is about its own wine: a grape, region, country, colour, vintage, price or producer it
names must be that wine's row. The intro and closing are about the wines shown: what they name
must be true of at least one of them, and a number of wines they announce ("three reds") must
be the number of cards. The text must be in the person's language and script (Latin letters
are always allowed: wine names are). Mentions are found with the same word lists that read
requests (catalog/reading.py), so a claim is recognised in every language they cover; a
negated mention ("no Georgian wines, but…") claims nothing.

Each problem comes back as repair feedback that names the fact and the row ("sm-042 is Touriga
Nacional from Douro, Portugal, not Shiraz"), with a mended reply that drops the false
sentences, for when the repair does not mend it either.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from rapidfuzz import fuzz

from sommelier.agent.text import sentences
from sommelier.catalog.lexicon import Phrases, appellations, broader_regions, fold, origin_of
from sommelier.catalog.reading import SWEET as SWEET_LEVELS
from sommelier.catalog.reading import Mention, Names, Words, read, words_for
from sommelier.catalog.vocabulary import GRAPE_ALIASES
from sommelier.i18n.languages import detect, english_name, likely
from sommelier.i18n.translations import plural

Facts = Mapping[str, Any]
YEARS = re.compile(r"(?<!\d)(19[6-9]\d|20[0-3]\d)(?!\d)")
# Case-blind: German writes "20 Euro", a model may write "20 EUR".
MONEY = re.compile(
    r"(?:[€$£]\s?(\d+(?:[.,]\d{1,2})?)|(\d+(?:[.,]\d{1,2})?)\s?(?:€|\$|£|eur\w*|euro\w*))",
    re.IGNORECASE,
)
# "rated 4.2", "4,3 su 5": a rating of one to five with its decimals (not "13.5" % or a year).
RATING = re.compile(r"(?<![\d.,])([1-5][.,]\d{1,2})(?![\d%])")
CLAIMED = ("grape", "region", "country", "type", "sweetness")  # what `_claims` checks
# Colours a fortified or sparkling wine may fairly be called (a Port is red, a Cava white).
ALSO = {
    "fortified": {"red", "white", "dessert"},
    "sparkling": {"white", "rosé"},
    "dessert": {"white", "fortified"},
}
SCRIPTS = {
    "ru": "CYRILLIC",
    "uk": "CYRILLIC",
    "bg": "CYRILLIC",
    "sr": "CYRILLIC",
    "el": "GREEK",
    "ja": "CJK",
    "zh": "CJK",
    "ko": "HANGUL",
    "hi": "DEVANAGARI",
    "ar": "ARABIC",
    "fa": "ARABIC",
    "he": "HEBREW",
    "th": "THAI",
    "ka": "GEORGIAN",
}
MIN_WORDS = 6  # shorter replies are not judged for their language
MIN_STEM = 3  # letters before the word for wine in a compound ("rot" of "Rotwein")
MIN_SENTENCE_WORDS = 4  # nor shorter sentences, when dropping those in another language
MIN_COPIED, SAME_TEXT = 3, 90  # a why sentence this long and this close copies the catalog


def script_of(ch: str) -> str:
    name = unicodedata.name(ch, "")
    if name.startswith(("CJK", "HIRAGANA", "KATAKANA")):
        return "CJK"
    return name.split(" ")[0] if name else ""


def foreign_letters(text: str, language: str) -> str:
    """Letters of a script the person's language does not use (Latin is always allowed)."""
    return "".join(ch for ch in text if _foreign(ch, language))


def _foreign(ch: str, language: str) -> bool:
    """A letter, or a mark on one (a Devanagari vowel sign), of a script `language` does not
    use: a mark left behind its letter is nonsense ("ैॉ ें")."""
    letter = ch.isalpha() or unicodedata.category(ch).startswith("M")
    return letter and script_of(ch) not in _allowed(language)


def own_words(text: str, propers: Iterable[str]) -> str:
    """`text` without the words of wines' names, producers, grapes and places: "Grüner
    Veltliner from Wachau" is not German prose."""
    for proper in propers:
        for word in proper.replace(",", " ").split():
            if len(word) > 2:
                text = text.replace(word, " ")
    return text


def propers_of(facts: Facts) -> list[str]:
    named = [
        facts.get("name"),
        facts.get("producer"),
        facts.get("region"),
        *facts.get("grapes", ()),
    ]
    return [str(p) for p in named if p]


def language_problem(texts: Sequence[str], language: str, propers: Sequence[str]) -> str | None:
    """The text is likely in another language than the person's, by the evaluation's own
    rule (`languages.likely`): a reply the judge counts as out of language is sent back."""
    text = own_words(" ".join(texts), propers)
    if len(text.split()) < MIN_WORDS:
        return None
    found = likely(text)
    if found is None or found == language:
        return None
    return (
        f"write the intro, every why and the closing in {english_name(language)}, the "
        f"person's language (they are in {english_name(found)})"
    )


def copies(
    fields: Mapping[str, str], picks: Sequence[str], facts: Mapping[str, Facts], language: str
) -> dict[str, list[str]]:
    """Sentences that copy a search result's line ("Sancerre Les Baronnes by Henri Bourgeois"),
    English whatever the person's language, or a why that copies its wine's description in
    another language: the card says it already."""
    lines = [
        fold(f"{f['name']} by {f['producer']}")
        for f in facts.values()
        if f.get("name") and f.get("producer")
    ]
    found: dict[str, list[str]] = {}
    for where, text in fields.items():
        wine = facts.get(picks[int(where[4:])]) if where.startswith("why:") else None
        for sentence in sentences(text):
            folded = fold(sentence)
            if any(line in folded for line in lines) or (
                wine and _copied(sentence, wine, language)
            ):
                found.setdefault(where, []).append(sentence)
    return found


def mixed_scripts(fields: Mapping[str, str]) -> dict[str, list[str]]:
    """Sentences with a word of two scripts ("дry Riesling с peach"): a small model slipping
    between Cyrillic and Latin mid-word writes nonsense around it."""
    return {
        where: [s for s in sentences(text) if any(_scripts(w) > 1 for w in re.findall(r"\w+", s))]
        for where, text in fields.items()
    }


def _scripts(word: str) -> int:
    return len({script_of(ch) for ch in word if ch.isalpha()})


def foreign_sentences(
    fields: Mapping[str, str], language: str, propers: Sequence[str], only: str | None = None
) -> dict[str, list[str]]:
    """Sentences clearly in another language than `language` (or in the language `only`)."""
    found: dict[str, list[str]] = {}
    for where, text in fields.items():
        for sentence in sentences(text):
            words = own_words(sentence, propers)
            if len(words.split()) < MIN_SENTENCE_WORDS:
                continue
            guess = likely(words)
            if guess not in (None, language) and only in (None, guess):
                found.setdefault(where, []).append(sentence)
    return found


def _claims(text: str, words: Words, names: Names, language: str) -> list[Mention]:
    """The facts a text states: grapes, regions, countries, colours and sweetness (these two
    only beside a word for wine: "red fruit" or "sweet tannins" is no claim), not negated,
    not a likeness ("softer than a Cabernet", "Burgundy-like", "a Bordeaux blend", "French
    oak", "Champagne method"), not "not too sweet"."""
    reading = read(text, names, language=language)
    folded = reading.folded
    counted = words.markers.get("counted")
    not_origin = words.markers.get("not_origin")
    likeness = _likenesses(folded, words)
    claims = []
    for m in reading.mentions:
        if m.negated or m.moderate or m.kind not in CLAIMED or m.start in likeness:
            continue
        after = folded[m.end :].lstrip()
        named = m.kind not in ("type", "sweetness")
        if named and (after.startswith("-") or (not_origin and not_origin.pattern.match(after))):
            continue
        if m.kind == "type" and not _beside_wine(folded, m, counted):
            continue
        if m.kind == "sweetness" and not _of_wine(folded, m, reading.mentions, counted):
            continue
        claims.append(m)
    labels = [
        Mention("label", m.phrase, m.start, m.end)
        for m in words.markers.get("label", Phrases.of(())).find(folded)
        if m.start not in likeness
    ]
    return (
        claims
        + labels
        + [s for s in _styles(folded, reading.mentions, not_origin) if s.start not in likeness]
    )


def _likenesses(folded: str, words: Words) -> set[int]:
    """Where a mention after a word of comparison may start ("than a ", "wie ein "): one short
    word (an article) may stand between."""
    compared = words.markers.get("compared")
    if compared is None:
        return set()
    starts = set()
    for match in compared.find(folded):
        space = re.match(r"\s+", folded[match.end :])
        if space is None:
            continue
        start = match.end + space.end()
        article = re.match(r"\w{1,3}\s+", folded[start:])
        starts |= {start, start + article.end()} if article else {start}
    return starts


def _styles(folded: str, mentions: Sequence[Mention], not_origin: Any) -> list[Mention]:
    """Style words that name a place ("un espumoso cava": Spain), not negated and not a
    likeness ("Champagne-like bubbles", "Port style")."""
    found = []
    for pattern, _ in appellations():
        for match in pattern.finditer(folded):
            after = folded[match.end() :]
            if after.startswith("-") or (not_origin and not_origin.pattern.match(after.lstrip())):
                continue
            if not any(m.negated and m.start <= match.start() < m.end for m in mentions):
                found.append(Mention("style", match.group(0), match.start(), match.end()))
    return found


def _beside_wine(folded: str, mention: Mention, counted: Any) -> bool:
    phrase = folded[mention.start : mention.end]
    if counted is None:
        return False
    if counted.pattern.search(phrase) or _compound(phrase, counted):
        return True  # "red wine", "vino tinto", "Rotwein"
    after = re.match(r"\s*([\w']+)", folded[mention.end :])
    before = re.search(r"([\w']+)\s*$", folded[: mention.start])
    return any(w is not None and counted.pattern.fullmatch(w.group(1)) for w in (after, before))


def _compound(phrase: str, counted: Any) -> bool:
    """A colour joined to a word for wine in one word ("Rotwein", "Weißwein", "Schaumwein"):
    German writes the two as one, so no space stands between them."""
    return " " not in phrase and any(
        counted.pattern.fullmatch(phrase[i:]) for i in range(MIN_STEM, len(phrase) - 1)
    )


def _of_wine(folded: str, mention: Mention, mentions: Sequence[Mention], counted: Any) -> bool:
    """Whether a sweetness word speaks of a wine: beside a word for wine ("сладкое вино"), or
    beside a colour that is ("a sweet red wine", "vino tinto dulce")."""
    if _beside_wine(folded, mention, counted):
        return True

    def gap(colour: Mention) -> str:
        if colour.start >= mention.end:
            return folded[mention.end : colour.start]
        return folded[colour.end : mention.start]

    colours = [m for m in mentions if m.kind == "type" and _beside_wine(folded, m, counted)]
    return any(not gap(colour).strip() for colour in colours)


def true_of(claim: Mention, wine: Facts, names: Names) -> bool:
    """Whether a claim holds for the wine's catalog row."""
    own = fold(" ".join(str(wine.get(k) or "") for k in ("name", "producer", "description")))
    if claim.kind == "grape":
        grapes = {GRAPE_ALIASES.get(fold(g), fold(g)) for g in wine.get("grapes") or []}
        return claim.value in grapes or claim.value in own
    if claim.kind == "country":
        return claim.value == fold(str(wine.get("country") or ""))
    if claim.kind == "type":
        kind = str(wine.get("type") or "")  # unknown: the row cannot contradict a colour
        return not kind or claim.value == kind or claim.value in ALSO.get(kind, set())
    if claim.kind == "sweetness":
        return _sweetness_true(claim.value, wine.get("sweetness"))
    if claim.kind == "label":
        return claim.value in own  # "Riesling Kabinett", "Valpolicella Ripasso"
    if claim.kind == "style":
        place = fold(f"{wine.get('region') or ''} {wine.get('country') or ''}")
        origin = origin_of(claim.value)
        return (
            claim.value in own or claim.value in place or (origin is not None and origin in place)
        )
    region = fold(str(wine.get("region") or ""))
    if claim.value in region or region in claim.value or claim.value in own:
        return True
    broader = broader_regions().get(region)
    if broader is not None and claim.value in names.regions:
        return claim.value in broader  # "a Burgundy" of a Chablis; not "a Chablis" of a Sancerre
    countries = {c for r, c in names.places if r == claim.value}
    return not countries or fold(str(wine.get("country") or "")) in countries


def _sweetness_true(claimed: str, sweetness: Any) -> bool:
    """Only the opposites are false: a dry wine called sweet ("классическое и сладкое вино" of
    a dry Shiraz, seen on the real model), a sweet one called dry. Off-dry sits between, and
    a wine whose sweetness the catalog does not know may be either."""
    if claimed == "dry":
        return sweetness not in SWEET_LEVELS
    return not (claimed in SWEET_LEVELS and sweetness == "dry")


def _numbers(text: str, wine: Facts) -> list[str]:
    """Vintages, prices and ratings a why states that are not its wine's."""
    wrong = []
    vintage = str(wine.get("vintage") or "")
    wrong += [year for year in YEARS.findall(text) if year != vintage]
    price = wine.get("price")
    money = list(MONEY.finditer(text))
    for match in money:
        said = float((match.group(1) or match.group(2)).replace(",", "."))
        if price is None or abs(said - float(price)) > max(0.5, 0.01 * float(price)):
            wrong.append(match.group(0).strip())
    return wrong + _ratings(text, wine, [m.span() for m in money])


def _ratings(text: str, wine: Facts, prices: Sequence[tuple[int, int]]) -> list[str]:
    """Ratings a why states that are not the one its card shows ("rated 4.2" copied from the
    previous turn's wine, under a card rated 3.5)."""
    rating = wine.get("rating")
    if rating is None:
        return []
    return [
        f"rated {match.group(1)}"
        for match in RATING.finditer(text)
        if not any(start <= match.start() < end for start, end in prices)
        and abs(float(match.group(1).replace(",", ".")) - float(rating)) > 0.06
    ]


def _copied(sentence: str, wine: Facts, language: str) -> bool:
    description = str(wine.get("description") or "")
    if not description or _language_of(description) in (None, language):
        return False
    return (
        len(sentence.split()) >= MIN_COPIED
        and fuzz.partial_ratio(fold(sentence), fold(description)) >= SAME_TEXT
    )


@cache
def _language_of(text: str) -> str | None:
    # The detector's best guess, however unsure: a catalog's short descriptions ("Passion
    # fruit, lime and cut grass") are seldom sure of anything, and a wrong guess costs a why.
    found = detect(text)
    return found[0] if found else None


def _false_in_why(
    why: str, wine: Facts, others: Mapping[str, Facts], ctx: ProseContext
) -> list[str]:
    """The sentences of one why that state what its wine's row contradicts."""
    found = []
    for sentence in sentences(why):
        claims = _claims(sentence, ctx.words, ctx.names, ctx.language)
        if (
            any(not true_of(c, wine, ctx.names) for c in claims)
            or _numbers(sentence, wine)
            or _producers(sentence, wine, others)
        ):
            found.append(sentence)
    return found


def _producers(sentence: str, wine: Facts, others: Mapping[str, Facts]) -> list[str]:
    folded = fold(sentence)
    own = fold(str(wine.get("producer") or ""))
    found = []
    for other in others.values():
        producer = fold(str(other.get("producer") or ""))
        if producer and len(producer) > 3 and producer in folded and producer not in own:
            found.append(str(other.get("producer")))
    return found


@dataclass(frozen=True)
class ProseContext:
    language: str
    names: Names
    words: Words

    @classmethod
    def of(cls, language: str, names: Names) -> ProseContext:
        return cls(language, names, words_for(language, names))


def _false_in_shared(text: str, wines: Sequence[Facts], ctx: ProseContext) -> list[str]:
    """Sentences of an intro or closing with a claim true of no wine shown (of the one it
    names, when it names one: "the Amarone, a wine from Georgia"). A question claims nothing."""
    found = []
    for sentence in sentences(text):
        if not wines or sentence.rstrip().endswith("?"):
            continue
        shown = [w for w in wines if _names(sentence, w)] or wines
        claims = _claims(sentence, ctx.words, ctx.names, ctx.language)
        if any(not any(true_of(c, w, ctx.names) for w in shown) for c in claims):
            found.append(sentence)
    return found


def _names(sentence: str, wine: Facts) -> bool:
    name = fold(str(wine.get("name") or ""))
    return len(name) > 3 and name in fold(sentence)


def false_facts(
    fields: Mapping[str, str], picks: Sequence[str], facts: Mapping[str, Facts], ctx: ProseContext
) -> dict[str, list[str]]:
    """The sentences of each field that state what the catalog rows contradict."""
    shown = [facts[i] for i in picks if i in facts]
    found: dict[str, list[str]] = {}
    for where, text in fields.items():
        if where.startswith("why:"):
            wine_id = picks[int(where[4:])]
            if wine_id in facts:
                others = {k: v for k, v in facts.items() if k != wine_id}
                found[where] = _false_in_why(text, facts[wine_id], others, ctx)
        else:
            found[where] = _false_in_shared(text, shown, ctx)
    return found


def without(text: str, said: Sequence[str]) -> str:
    """`text` less the given sentences (the rest as it was, line breaks too), and less a list
    number left alone on its line ("1. sm-060: Concha y Toro…" whose copied line went)."""
    for sentence in said:
        text = text.replace(sentence, "", 1)
    if said:
        text = re.sub(r"\n{3,}", "\n\n", _LONE_NUMBER.sub("", text))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


_LONE_NUMBER = re.compile(r"^[ \t]*\d{1,2}[.)]?[ \t]*$\n?", re.MULTILINE)


ENGLISH_WINE = re.compile(r"\b([Ww]ines?)\b")


def native_wine(text: str, language: str, propers: Sequence[str] = ()) -> str:
    """`text` with the English word "wine" in the person's language: small models write the
    format's word into their own ("Hier sind die Wines, die Sie suchen", "¿En qué te gustaría
    hablar de wine?"). Left alone in English, where no translation exists, and where a wine's
    name or producer has the word."""
    if language == "en" or any(ENGLISH_WINE.search(p) for p in propers):
        return text

    def native(match: re.Match[str]) -> str:
        word = match.group(1)
        several = word.lower() == "wines"
        translated = plural(language, "wine", "wines", 2 if several else 1)
        if translated.lower() == word.lower():
            return word
        return translated[:1].upper() + translated[1:] if word[0].isupper() else translated

    return ENGLISH_WINE.sub(native, text)


def without_foreign(text: str, language: str) -> str:
    """`text` without letters of a script the person's language does not use."""
    kept = "".join(ch for ch in text if not _foreign(ch, language))
    return re.sub(r"\s{2,}", " ", kept).strip()


def _allowed(language: str) -> set[str]:
    allowed = {"LATIN", SCRIPTS.get(language, "LATIN")}
    return allowed | {"CJK"} if language == "ja" else allowed
