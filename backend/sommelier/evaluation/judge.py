"""The evaluation's judge: what a person would notice in a reply, decided with the judge's own
eyes. It imports nothing of the runtime's validation or reading (chat/, catalog/reading,
i18n/languages): it reads the catalog file itself, tells languages with another detector than
the runtime's (langdetect, and scripts), and knows wine words from a small table of its own.
So a rule of the runtime that misfires, or misses, shows here instead of agreeing with itself.

A turn record (evaluation/record.py) is judged against the turn's expectations (sets.Expect)
and the catalog rows of its cards:
- answered: the person got a reply;
- searched: a wine request searched the catalog;
- grounded: every card is a wine this turn's tools returned;
- cards: the wines respect what was asked (style, place, grape, budget, sweetness, cheaper);
- facts: a question is answered with the fact asked for (a number in range, a word, or the
  right wine of those shown);
- language: the reply's own words are in the person's language;
- notice: a "nothing matches" line says something true of the catalog and names only wishes the
  person stated;
- false facts: a why names a colour, country or grape its wine does not have.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from babel import Locale, UnknownLocaleError
from langdetect import DetectorFactory, LangDetectException, detect_langs

from sommelier.evaluation.sets import Expect, Turn

DetectorFactory.seed = 0  # langdetect samples; a seed makes a run repeatable
MIN_LETTERS = 20  # fewer letters of prose than this: too little to tell a language
BODY = {"very light": 1, "light": 2, "medium": 3, "full": 4, "very full": 5}
SWEET = ("sweet", "medium-sweet")
DRYNESS = {"dry": 0, "off-dry": 1, "medium-dry": 1, "medium-sweet": 2, "sweet": 3}
# Words for a wine's colour or style, the judge's own, per language: a notice or a why that
# names one claims it. Folded (lower case, no accents).
COLOURS: dict[str, dict[str, tuple[str, ...]]] = {
    "red": {
        "en": ("red",), "de": ("rotwein", "roter", "rote"), "fr": ("rouge",),
        "es": ("tinto",), "it": ("rosso",), "pt": ("tinto",), "nl": ("rode", "rood"),
        "ru": ("красн",), "uk": ("червон",), "pl": ("czerwon",), "cs": ("červen", "cerven"),
        "sv": ("rott", "röd", "rod"), "tr": ("kırmızı", "kirmizi"), "el": ("κόκκιν", "κοκκιν"),
        "ja": ("赤",), "zh": ("红",), "ko": ("레드",), "hi": ("रेड", "लाल"),
    },
    "white": {
        "en": ("white",), "de": ("weißwein", "weisswein", "weißer"), "fr": ("blanc",),
        "es": ("blanco",), "it": ("bianco",), "pt": ("branco",), "nl": ("witte", "wit "),
        "ru": ("бел",), "uk": ("біл",), "pl": ("biał", "bial"), "cs": ("bíl", "bil"),
        "sv": ("vitt", "vit "), "tr": ("beyaz",), "el": ("λευκ",), "ja": ("白",),
        "zh": ("白葡萄", "白酒"), "ko": ("화이트",), "hi": ("व्हाइट", "सफेद"),
    },
    "rosé": {
        "en": ("rosé", "rose wine"), "de": ("rosé",), "fr": ("rosé",), "es": ("rosado",),
        "it": ("rosato",), "pt": ("rosé",), "nl": ("rosé",), "ru": ("розов",),
        "uk": ("рожев",), "pl": ("różow", "rozow"), "cs": ("růžov", "ruzov"),
        "sv": ("rosé",), "tr": ("roze",), "el": ("ροζέ", "ροζε"), "ja": ("ロゼ",),
        "zh": ("桃红",), "ko": ("로제",), "hi": ("रोज़े", "रोजे"),
    },
    "dessert": {
        "en": ("dessert wine", "sweet wine"), "de": ("dessertwein", "süßwein"),
        "fr": ("vin de dessert", "vin doux"), "es": ("vino dulce", "vino de postre"),
        "it": ("vino da dessert", "vino dolce"), "pt": ("vinho de sobremesa", "vinho doce"),
        "nl": ("dessertwijn", "zoete wijn"), "ru": ("десертн",), "uk": ("десертн",),
        "pl": ("deserow",), "cs": ("dezertn",), "sv": ("dessertvin",), "tr": ("tatlı şarap",),
        "el": ("επιδορπ", "γλυκό κρασί"), "ja": ("デザートワイン", "甘口"),
        "zh": ("甜酒", "甜葡萄酒"), "ko": ("디저트 와인",), "hi": ("डेज़र्ट वाइन", "मीठी वाइन"),
    },
    "sparkling": {
        "en": ("sparkling",), "de": ("schaumwein", "sekt"), "fr": ("effervescent", "pétillant"),
        "es": ("espumoso",), "it": ("spumante",), "pt": ("espumante",), "nl": ("mousserend",),
        "ru": ("игрист",), "uk": ("ігрист",), "pl": ("musując", "musujac"),
        "cs": ("šumiv", "sumiv"), "sv": ("mousserande",), "tr": ("köpüklü", "kopuklu"),
        "el": ("αφρώδ", "αφρωδ"), "ja": ("スパークリング",), "zh": ("起泡",),
        "ko": ("스파클링",), "hi": ("स्पार्कलिंग",),
    },
}  # fmt: skip
# Words Ukrainian has and Russian has not, for a sentence with no і, ї, є or ґ in it.
UKRAINIAN = frozenset({"будь", "ласка", "дякую", "що", "щось", "це", "або", "мені", "яке", "якe"})
CURRENCY = re.compile(r"(€|eur|euro|\$|£|usd|руб|₽|zł|kr|₺|円|元|원|₹|रुपये)", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.,])(\d{1,4}(?:[.,]\d{1,2})?)(?![\d])")


@dataclass(frozen=True, slots=True)
class Wine:
    id: str
    name: str
    producer: str
    country: str  # folded English name
    region: str
    grapes: frozenset[str]  # folded
    type: str
    sweetness: str
    body: str
    price: float | None
    foods: frozenset[str]  # folded


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _default_catalog() -> Path:
    return Path(str(resources.files("sommelier.catalog") / "data" / "starter_wines.csv"))


@cache
def catalog(path: Path | None = None) -> dict[str, Wine]:
    """The catalog file as the judge reads it (the starter catalog unless told otherwise)."""
    with (path or _default_catalog()).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return {row["id"]: _wine(row) for row in rows}


def _wine(row: Mapping[str, str]) -> Wine:
    price = row.get("price") or ""
    return Wine(
        id=row["id"],
        name=row["name"],
        producer=row.get("producer") or "",
        country=fold(row.get("country") or ""),
        region=row.get("region") or "",
        grapes=frozenset(fold(g) for g in (row.get("grapes") or "").split(";") if g),
        type=row["type"],
        sweetness=row.get("sweetness") or "",
        body=row.get("body") or "",
        price=float(price) if price else None,
        foods=frozenset(fold(f) for f in (row.get("food_pairings") or "").split(";") if f),
    )


# -- the wines against the request ------------------------------------------------------------


def card_problems(expect: Expect, wines: Sequence[Wine], before: Sequence[Wine]) -> list[str]:
    """What the cards break of what was asked; empty when nothing."""
    if expect.adds is not None:
        return []  # the wines bottles they have may be: `adding_problems` judges them
    if not expect.wines:
        return [f"{len(wines)} wine(s) nobody asked for"] if wines else []
    if not wines:
        return [] if expect.impossible else ["no wine"]
    problems = [p for wine in wines for p in _wine_problems(expect, wine)]
    if expect.grapes and not any(w.grapes & {fold(g) for g in expect.grapes} for w in wines):
        problems.append(f"none of {', '.join(expect.grapes)}")
    if expect.foods and not any(_pairs(w, expect.foods) for w in wines):
        problems.append(f"none pairs with {', '.join(expect.foods)}")
    if expect.cheaper:
        dearest = max((w.price for w in before if w.price is not None), default=None)
        problems += [
            f"{w.id} at {w.price:g} is not cheaper than {dearest:g}"
            for w in wines
            if dearest is not None and w.price is not None and w.price >= dearest
        ]
    return problems


def _pairs(wine: Wine, foods: Sequence[str]) -> bool:
    return any(fold(food) in pairing for food in foods for pairing in wine.foods)


def _wine_problems(expect: Expect, wine: Wine) -> list[str]:
    checks = [
        (bool(expect.types) and wine.type not in expect.types, f"a {wine.type}"),
        (wine.type in expect.not_types, f"a {wine.type}"),
        (bool(expect.countries) and wine.country not in expect.countries, f"from {wine.country}"),
        (wine.country in expect.not_countries, f"from {wine.country}"),
        (
            expect.max_price is not None and (wine.price or 0) > expect.max_price,
            f"at {wine.price:g}" if wine.price is not None else "without a price",
        ),
        (expect.sweet and wine.sweetness not in SWEET, wine.sweetness or "of unknown sweetness"),
        (expect.not_sweet and wine.sweetness in SWEET, wine.sweetness),
    ]
    return [f"{wine.id} is {what}" for broken, what in checks if broken]


# -- the fact asked for ----------------------------------------------------------------------


def fact_problem(expect: Expect, text: str, shown: Sequence[Wine], before: Sequence[Wine]) -> str:
    """Why the reply does not hold the fact a question asked for; empty when it does."""
    answer = expect.answer
    if answer is None:
        return ""
    folded = fold(text)
    if answer.numbers is not None:
        low, high = answer.numbers
        found = [float(n.replace(",", ".")) for n in NUMBER.findall(text)]
        if not any(low <= n <= high for n in found):
            return f"no number from {low:g} to {high:g}"
    if answer.any and not any(fold(word) in folded for word in answer.any):
        return f"none of {', '.join(answer.any)}"
    if answer.pick:
        return _pick_problem(answer.pick, text, shown, before)
    return ""


def _pick_problem(pick: str, text: str, shown: Sequence[Wine], before: Sequence[Wine]) -> str:
    """The wine of those shown before that the question asks for must be the one named (by
    name in the text, or as the only card)."""
    if not before:
        return ""  # nothing was shown: the human reading judges
    right = _right_wines(pick, before)
    if not right:
        return ""  # none of them fits: any honest answer will do
    named = {w.id for w in before if fold(w.name) in fold(text)}
    named |= {w.id for w in shown} if len(shown) == 1 else set()
    if named & {w.id for w in right} and not (named - {w.id for w in right}):
        return ""
    return f"names {sorted(named) or 'no wine'}, not {sorted(w.id for w in right)}"


def _right_wines(pick: str, wines: Sequence[Wine]) -> list[Wine]:
    if pick.startswith("food:"):
        food = fold(pick[5:])
        return [w for w in wines if any(food in f for f in w.foods)]
    key = {
        "lightest": lambda w: BODY.get(w.body, 3),
        "fullest": lambda w: -BODY.get(w.body, 3),
        "cheapest": lambda w: w.price or 0,
        "dearest": lambda w: -(w.price or 0),
        "driest": lambda w: DRYNESS.get(w.sweetness, 0),
        "sweetest": lambda w: -DRYNESS.get(w.sweetness, 0),
    }[pick]
    best = min(key(w) for w in wines)
    return [w for w in wines if key(w) == best]


# -- language --------------------------------------------------------------------------------


def language_of(text: str) -> str | None:
    """The language of `text` by its script where that tells (Hangul, kana, Han, Greek,
    Devanagari, Ukrainian letters), else by langdetect; None when too little to tell."""
    letters = [c for c in text if c.isalpha()]
    if sum(3 if _dense(c) else 1 for c in letters) < MIN_LETTERS:
        return None
    scripts = _scripts(letters)
    for script, code in (("HANGUL", "ko"), ("HIRAGANA", "ja"), ("KATAKANA", "ja")):
        if scripts.get(script, 0) >= 2:
            return code
    major = max(scripts, key=lambda s: scripts[s])
    if major == "CJK":
        return "zh"
    fixed = {"GREEK": "el", "DEVANAGARI": "hi"}
    if major in fixed:
        return fixed[major]
    try:
        found = detect_langs(text)
    except LangDetectException:
        found = []
    best = found[0].lang.split("-")[0] if found and found[0].prob >= 0.6 else None
    if major == "CYRILLIC" and best not in ("bg", "mk", "sr"):
        ukrainian = any(c in "іїєґІЇЄҐ" for c in letters) or best == "uk"
        ukrainian = ukrainian or bool(set(re.findall(r"\w+", text.casefold())) & UKRAINIAN)
        return "uk" if ukrainian else "ru"
    return {"no": "nb"}.get(best or "", best)  # langdetect's Norwegian is Bokmål


def _dense(char: str) -> bool:
    """A letter of a script that says a word or a syllable in one (Han, kana, Hangul)."""
    return "\u3040" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"


def _scripts(letters: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for c in letters:
        name = unicodedata.name(c, "")
        script = name.split(" ")[0] if name else "?"
        counts[script] = counts.get(script, 0) + 1
    return counts


def own_words(text: str, wines: Sequence[Wine]) -> str:
    """`text` less the wines' names, producers, regions and grapes (a Spanish why that names
    "Grüner Veltliner" is still Spanish)."""
    names = sorted(
        {n for w in wines for n in (w.name, w.producer, w.region, *w.grapes) if n},
        key=len,
        reverse=True,
    )
    folded = fold(text)
    for name in names:
        folded = folded.replace(fold(name), " ")
    return folded


# -- notices and false facts ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Claim:
    """What a notice names: the wishes it says the catalog cannot meet together."""

    types: frozenset[str] = frozenset()
    countries: frozenset[str] = frozenset()
    grapes: frozenset[str] = frozenset()
    max_price: float | None = None

    def empty(self) -> bool:
        return not (self.types or self.countries or self.grapes or self.max_price)


@cache
def country_names(language: str) -> dict[str, str]:
    """Folded country name in `language` and English → folded English name (CLDR)."""
    territories = Locale.parse("en").territories
    english = {c: n for c, n in territories.items() if c.isalpha()}  # countries, not "Africa"
    names = {fold(str(n)): fold(str(n)) for n in english.values()}
    try:
        local = Locale.parse(language).territories
    except (ValueError, UnknownLocaleError):
        return names
    names |= {fold(str(n)): fold(str(english[c])) for c, n in local.items() if c in english}
    return {k: v for k, v in names.items() if len(k) > 3}


def claim_of(text: str, language: str, grapes: Iterable[str]) -> Claim:
    folded = fold(text)
    types = {
        colour
        for colour, words in COLOURS.items()
        for lang in {language, "en"}
        for word in words.get(lang, ())
        if _word_in(fold(word), folded)  # "rockrose" names no rosé
    }
    countries = {eng for name, eng in country_names(language).items() if _word_in(name, folded)}
    found_grapes = {g for g in grapes if len(g) > 3 and _word_in(g, folded)}
    prices = [float(m.group(1).replace(",", ".")) for m in NUMBER.finditer(text)]
    priced = [p for p in prices if CURRENCY.search(text)]
    return Claim(
        frozenset(types),
        frozenset(countries),
        frozenset(found_grapes),
        max(priced) if priced else None,
    )


def _word_in(word: str, folded: str) -> bool:
    """`word` at the start of a word of `folded` (anywhere, for words of Chinese, Japanese or
    Korean letters)."""
    if any(_dense(c) for c in word):
        return word in folded
    return re.search(rf"(?<![^\W\d_]){re.escape(word)}", folded) is not None


def notice_problems(
    notice: str, language: str, stated: Expect, wines: Mapping[str, Wine]
) -> list[str]:
    """A notice that says something false of the catalog (a wine matches everything it names)
    or names a wish the person never stated."""
    grapes = {g for w in wines.values() for g in w.grapes}
    claim = claim_of(notice, language, grapes)
    if claim.empty():
        return []
    problems = []
    matching = [w for w in wines.values() if _meets(w, claim)]
    if matching:
        problems.append(f"false notice: {matching[0].id} meets all it names ({_said(claim)})")
    invented = _invented(claim, stated)
    if invented:
        problems.append(f"invented wish: {', '.join(sorted(invented))}")
    return problems


def _meets(wine: Wine, claim: Claim) -> bool:
    return (
        (not claim.types or wine.type in claim.types)
        and (not claim.countries or wine.country in claim.countries)
        and (not claim.grapes or bool(wine.grapes & claim.grapes))
        and (claim.max_price is None or (wine.price or 0) <= claim.max_price * 1.02)
    )


def _said(claim: Claim) -> str:
    parts = [*sorted(claim.types), *sorted(claim.countries), *sorted(claim.grapes)]
    if claim.max_price:
        parts.append(f"≤ {claim.max_price:g}")
    return ", ".join(parts)


def _invented(claim: Claim, stated: Expect) -> set[str]:
    types = set(stated.types)
    countries = set(stated.countries)
    grapes = {fold(g) for g in stated.grapes}
    invented = {t for t in claim.types if t not in types and not stated.impossible}
    invented |= {c for c in claim.countries if c not in countries and not stated.impossible}
    invented |= {g for g in claim.grapes if g not in grapes and not stated.impossible}
    return invented


def false_facts(
    whys: Sequence[tuple[Wine, str]], language: str, wines: Mapping[str, Wine]
) -> list[str]:
    """A why that names a colour, a country or a grape its own wine does not have."""
    grapes = {g for w in wines.values() for g in w.grapes}
    found = []
    for wine, why in whys:
        claim = claim_of(why, language, grapes)
        wrong = [t for t in claim.types if t != wine.type and not _styled(wine, t)]
        wrong += [c for c in claim.countries if c != wine.country]
        wrong += [g for g in claim.grapes if g not in wine.grapes]
        if wrong:
            found.append(f"{wine.id}: {', '.join(sorted(wrong))}")
    return found


def _styled(wine: Wine, colour: str) -> bool:
    """A sparkling or dessert wine may still be called white or red (a white Champagne)."""
    return wine.type in ("sparkling", "dessert", "fortified") and colour in ("white", "red")


# -- one turn --------------------------------------------------------------------------------


@dataclass(slots=True)
class Verdict:
    answered: bool
    searched: bool | None  # None: no search was asked for
    grounded: bool
    cards: list[str] = field(default_factory=list)
    fact: str = ""
    fact_asked: bool = False
    language: str | None = None
    in_language: bool = True
    notice: list[str] = field(default_factory=list)
    notice_missing: bool = False
    false_facts: list[str] = field(default_factory=list)

    @property
    def good(self) -> bool:
        """Everything the judge can check holds (a person may still be unsatisfied)."""
        return (
            self.answered
            and self.searched is not False
            and self.grounded
            and not self.cards
            and not self.fact
            and self.in_language
            and not self.notice
            and not self.notice_missing
            and not self.false_facts
        )

    def problems(self) -> list[str]:
        said = [] if self.answered else ["no answer"]
        said += ["no search"] if self.searched is False else []
        said += [] if self.grounded else ["a card no tool returned"]
        said += self.cards + ([f"fact: {self.fact}"] if self.fact else [])
        said += [] if self.in_language else [f"in {self.language}"]
        said += self.notice + (["nothing said of what was given up"] if self.notice_missing else [])
        return said + [f"false fact: {f}" for f in self.false_facts]


def judge_turn(
    turn: Turn,
    language: str,
    record: Mapping[str, Any],
    before: Sequence[str],
    stated: Expect,
    wines: Mapping[str, Wine] | None = None,
    cellar: frozenset[str] = frozenset(),
) -> Verdict:
    """One turn's record judged: `before` are the previous reply's card ids, `stated` what the
    person asked for so far in the dialog (for invented wishes), `cellar` the ids of the
    person's own bottles."""
    wines = wines if wines is not None else catalog()
    shown = [wines[c["id"]] for c in record.get("cards", []) if c.get("id") in wines]
    previous = [wines[i] for i in before if i in wines]
    expect = turn.expect
    text = str(record.get("text") or "")
    returned = set(record.get("returned") or [])
    prose = own_words(_prose(record), [*shown, *previous])
    found_language = language_of(prose)
    verdict = Verdict(
        answered=record.get("status") == "ok" and bool(text.strip()),
        searched=bool(record.get("searched")) if turn.kind == "request" else None,
        grounded=all(c.get("id") in returned for c in record.get("cards", [])),
        # A follow-up about the wines shown may answer in words alone ("the lightest is …").
        cards=[]
        if turn.kind == "follow_up" and not shown
        else card_problems(expect, shown, previous)
        + [
            f"{w.id} is not in their cellar"
            for w in shown
            if expect.from_cellar and w.id not in cellar
        ],
        fact=fact_problem(expect, text, shown, previous),
        fact_asked=expect.answer is not None,
        language=found_language,
        in_language=found_language in (None, language),
    )
    verdict.cards += adding_problems(expect, record)
    notice = str(record.get("notice") or "")
    if notice:
        verdict.notice = notice_problems(notice, language, stated, wines)
    verdict.notice_missing = expect.impossible and not notice and bool(shown)
    whys = [
        (wines[c["id"]], str(c.get("why") or ""))
        for c in record.get("cards", [])
        if c.get("id") in wines
    ]
    verdict.false_facts = false_facts(whys, language, wines)
    return verdict


def adding_problems(expect: Expect, record: Mapping[str, Any]) -> list[str]:
    """Bottles offered for the cellar, against what the person said they have: the count, the
    vintage and the wine (among the cards, or none for a wine the catalog lacks); an offer to
    a person who said no such thing is a problem too."""
    offered = record.get("adding")
    wanted = expect.adds
    if wanted is None:
        return ["offered to add bottles to the cellar"] if offered else []
    if not isinstance(offered, Mapping):
        return ["no offer to add the bottles"]
    problems = []
    if offered.get("bottles") != wanted.bottles:
        problems.append(f"{offered.get('bottles')} bottles offered, not {wanted.bottles}")
    if wanted.vintage is not None and offered.get("vintage") != wanted.vintage:
        problems.append(f"vintage {offered.get('vintage')}, not {wanted.vintage}")
    shown = [c.get("id") for c in record.get("cards", [])]
    if wanted.wine is not None and wanted.wine not in shown:
        problems.append(f"{wanted.wine} is not among the wines offered")
    if wanted.wine is None and shown:
        problems.append("catalog wines offered for a wine it lacks")
    return problems


def _prose(record: Mapping[str, Any]) -> str:
    """The words the reply says itself: intro, whys and closing (the notice is the bot's own
    fixed text; the card facts are the catalog's)."""
    parts = [str(record.get("intro") or ""), str(record.get("closing") or "")]
    parts += [str(c.get("why") or "") for c in record.get("cards", [])]
    said = " ".join(p for p in parts if p.strip())
    return said if said.strip() else str(record.get("text") or "")
