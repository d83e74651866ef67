"""A person's message, read once per turn in their language: what it asks for, what it turns
down, its budget, and whether it is a wine request at all.

The words come from the lexicon of the message's language and English (the lingua franca of
wine labels), plus the catalog's own grapes, regions and countries; typos are matched to those
words with rapidfuzz. Negation covers the rest of its clause ("No wine from France please,
maybe a Spanish red": France is refused, Spain is not); "not too sweet" turns sweet down
without asking for dry. The model's own reading is merged later (tool_arguments.py): these
words may add or veto a filter, never replace a model value they do not contradict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import pairwise
from typing import Any

from rapidfuzz import fuzz, process

from sommelier.catalog.lexicon import (
    Lexicon,
    Match,
    Phrases,
    beside,
    country_names,
    fold,
    lexicon,
    narrower_regions,
    negation_words,
    origin_in,
)
from sommelier.catalog.prices import Price, PriceWords, in_digits, price_words, read_price
from sommelier.catalog.vocabulary import GRAPE_ALIASES
from sommelier.i18n.languages import COVERED, choose

CHEAP = 15.0  # "cheap", "günstig": an everyday bottle, in the catalog's currency
SUBJECTS = ("type", "types", "food", "grape", "country", "countries", "region")
SWEET = ("sweet", "medium-sweet")
ANY_OF = {
    "country": "countries",
    "type": "types",
}  # two of these asked for: the search takes either
PUNCTUATION = re.compile(r"[.,;:!?¿¡()\[\]\n]+")
TYPO_MIN, TYPO_SCORE = 6, 86  # fuzzy matching: words of 6+ letters, 86 % alike
LATE = 2  # a sentence's first words: where a question word makes it a question
NEGATION, NEGATION_AFTER = "negation", "negation_after"
# A word that turns down what precedes it follows within this many characters: "フランス以外",
# "프랑스 말고", "Fransa'dan olmasın".
AFTER_CHARS = 14


@dataclass(frozen=True)
class Names:
    """What the catalog holds, folded: country, region and grape names, its currency, and the
    country of each region."""

    countries: frozenset[str] = frozenset()
    regions: frozenset[str] = frozenset()
    grapes: frozenset[str] = frozenset()
    currency: str = "EUR"
    places: frozenset[tuple[str, str]] = frozenset()  # (region, country)


@dataclass(frozen=True)
class Mention:
    kind: str
    value: str
    start: int
    end: int
    negated: bool = False
    moderate: bool = False  # "not too sweet": less of it, not its opposite
    origin: str | None = None  # the country of a style named for its place ("cava": spain)


@dataclass(frozen=True)
class Reading:
    """What one message asks for, in the catalog's terms."""

    text: str
    language: str
    folded: str = ""  # the text as read: folded, typos mended (mentions point into it)
    filters: Mapping[str, Any] = field(default_factory=dict)
    excluded: Mapping[str, frozenset[str]] = field(default_factory=dict)
    price: Price | None = None  # in the person's currency; filters hold the catalog's
    cheap: bool = False
    cheaper: bool = False
    pricier: bool = False
    any_price: bool = False  # "forget the budget": no price bound, not even the earlier one
    other: bool = False  # "something different"
    reference: bool = False  # "tell me more about the first one"
    ordinal: int | None = None
    about_wine: bool = False
    wine_words: bool = False  # a word for wine itself ("wine", "Wein", "bottle")
    request: bool = False
    question: bool = False  # a general question ("what is…", "wie…") without a request
    courtesy: bool = False  # the whole message is "thanks", "hello"
    likes: bool = False  # "I love …": a statement about their taste
    dislikes: bool = False  # "I don't drink …"
    owned: bool = False  # "I bought 6 bottles of …": bottles they have, maybe for their cellar
    mentions: tuple[Mention, ...] = ()
    # From the person's earlier messages in this conversation (read_turn): the subject of the
    # latest request that had one, and the latest budget.
    earlier_subject: Mapping[str, Any] = field(default_factory=dict)
    earlier_price: Mapping[str, float] = field(default_factory=dict)
    earlier_texts: tuple[str, ...] = ()  # the person's last messages before this one

    @property
    def subject(self) -> bool:
        """Whether the words set their own subject (a style, food, grape or place)."""
        return any(k in self.filters for k in SUBJECTS)

    @property
    def follow_up(self) -> bool:
        return self.cheaper or self.pricier or self.any_price or self.other or self.reference

    @property
    def wine_request(self) -> bool:
        return (self.about_wine and not self.question) or self.follow_up

    def refused(self, kind: str) -> frozenset[str]:
        return self.excluded.get(kind, frozenset())


@dataclass(frozen=True)
class Words:
    """The compiled words of one reading: the lexicons in use and the catalog's names."""

    kinds: Mapping[str, Phrases]
    markers: Mapping[str, Phrases]
    ordinals: Phrases
    price: PriceWords
    known: frozenset[str]  # every single word the lists know (typos are matched to these)
    targets: tuple[str, ...]  # words a typo may be corrected to
    prefixes: tuple[str, ...]  # the stems of "word*" entries: a word they start is known


@cache
def words_for(language: str, names: Names) -> Words:
    lexicons = beside(language)
    kinds = {kind: _kind(lexicons, kind) for kind in ("type", "sweetness", "body", "food")}
    kinds["country"] = Phrases.of({**_catalog(names.countries), **country_names(language)}.items())
    kinds["grape"] = Phrases.of({**_catalog(names.grapes), **GRAPE_ALIASES}.items())
    regions = _catalog(r for r in names.regions - names.countries if len(r) > 3)
    # A broader region some catalog region lies in ("Loire": Sancerre) is a region too.
    broader = {b: b for b, within in narrower_regions().items() if set(within) & names.regions}
    kinds["region"] = Phrases.of([*regions.items(), *broader.items()])
    own = _own_negations(language)
    markers = {
        key: Phrases.of(
            [*((p, key) for lx in lexicons for p in lx.words.get(key, ())), *own.get(key, ())]
        )
        for key in {*(k for lx in lexicons for k in lx.words), *own}
    }
    if language not in COVERED:
        # English question openers read in another language are other words ("Do pierogów"
        # is "for pierogi" in Polish): a request taken for a general question got no search.
        markers.pop("question", None)
    ordinals = Phrases.of(
        (p, key) for lx in lexicons for key, phrases in lx.ordinals.items() for p in phrases
    )
    price = PriceWords.of(lexicons)
    phrases = (*kinds.values(), *markers.values(), *price.phrases())
    single = {w for ps in phrases for w in _words(ps)}
    # A misspelt word may be meant as one of these, or as the stem of a "word*" entry
    # ("Weiswein" for "weisswein*").
    stems = {p[:-1] for ps in kinds.values() for p in ps.values if p.endswith("*") and " " not in p}
    # A typo is not mended into a country the catalog lacks: "que tinto você indica" was read
    # as India, and the notice said the catalog has no red from India.
    # Nor into a negation: "istiyorum" (I want) was mended into "istemiyorum" (I don't want).
    untargeted = _unheld_countries(kinds["country"], names)
    untargeted |= {w for pairs in own.values() for phrase, _ in pairs for w in phrase.split()}
    targets = tuple(
        sorted(w for w in single | stems if len(w) >= TYPO_MIN - 1 and w not in untargeted)
    )
    # A word a "word*" entry matches is known as it is: "teurer" (teurer*) is not "teuer".
    prefixes = tuple(p[:-1] for ps in phrases for p in ps.values if _one_stem(p))
    return Words(kinds, markers, ordinals, price, frozenset(single), targets, prefixes)


def _own_negations(language: str) -> dict[str, list[tuple[str, str]]]:
    """The negation words of a language without a word list, as markers: `negation` (before
    what it turns down) and `negation_after`."""
    before, after = negation_words(language)
    sides = ((NEGATION, before), (NEGATION_AFTER, after))
    return {key: [(word, key) for word in words] for key, words in sides if words}


def _unheld_countries(countries: Phrases, names: Names) -> set[str]:
    """The words of the names of countries the catalog holds no wine from (none when the
    catalog's countries are not known)."""
    if not names.countries:
        return set()
    held = {w for p, v in countries.values.items() if v in names.countries for w in p.split()}
    return {
        w for p, v in countries.values.items() if v not in names.countries for w in p.split()
    } - held


def _one_stem(phrase: str) -> bool:
    return phrase.endswith("*") and " " not in phrase and len(phrase) > TYPO_MIN - 1


def _kind(lexicons: Sequence[Lexicon], kind: str) -> Phrases:
    return Phrases.of(
        (p, value) for lx in lexicons for value, phrases in lx.kinds[kind].items() for p in phrases
    )


def _catalog(values: Iterable[str]) -> dict[str, str]:
    return {v: v for v in values if v}


def _words(phrases: Phrases) -> Iterable[str]:
    for phrase in phrases.values:
        if not phrase.endswith("*"):
            yield from phrase.split()


@cache
def votes_for(text: str) -> dict[str, int]:
    """How many known words of each covered language `text` uses (a tie-breaker for short
    messages the detector is unsure of). A phrase counts each of its words: "más caro de" is
    three Spanish words, not one against Portuguese "mas" and "caro"."""
    return {
        code: sum(len(m.phrase.split()) for m in _everything(code).find(text)) for code in COVERED
    }


@cache
def _everything(code: str) -> Phrases:
    """The words that tell `code` apart: not English ones (wine's lingua franca), and for
    English not those other languages use too ("rosé", "prosecco")."""
    others = ("en",) if code != "en" else tuple(c for c in COVERED if c != "en")
    shared = {fold(w) for other in others for w in lexicon(other).all_words()}
    own = {fold(w) for w in lexicon(code).all_words()}
    return Phrases.of((w, code) for w in own if w not in shared and len(w) > 2)


def read(
    text: str,
    names: Names = Names(),
    *,
    language: str | None = None,
    earlier: Sequence[str] = (),
    hint: str | None = None,
) -> Reading:
    """Read one message. `language` when known; else it is chosen from the text, the person's
    `earlier` messages and the client's `hint`."""
    folded = fold(text)
    if language is None:
        language = choose(text, earlier, hint, votes_for(folded))
    words = words_for(language, names)
    folded = corrected(folded, words)
    mentions = _written_as_a_country(_mentions(folded, words), folded, text)
    price = _price(in_digits(folded, language), words)
    return _reading(text, language, folded, mentions, price, words, names)


# Country names that are ordinary words in lower case: a country only as written in capitals
# ("a US Pinot"; "25 of us" is the people, and its notice said "nothing from United States").
_CAPITALS_ONLY = {"us": re.compile(r"\bU\.?S\.?(?![\w.])")}


def _written_as_a_country(
    mentions: tuple[Mention, ...], folded: str, text: str
) -> tuple[Mention, ...]:
    def ordinary(m: Mention) -> bool:
        capitals = _CAPITALS_ONLY.get(folded[m.start : m.end])
        return m.kind == "country" and capitals is not None and not capitals.search(text)

    def dish_place(m: Mention) -> bool:
        # "un bœuf bourguignon": a dish named for its place asks for no wine from there (its
        # reply said "from France, as you asked", unseen55); "un vin bourguignon" does.
        foods = [d for d in mentions if d.kind == "food"]
        inside = any(
            d.start <= m.start and m.end <= d.end and d.end - d.start > m.end - m.start
            for d in foods
        )
        after_food = any(0 <= m.start - d.end <= 1 for d in foods)
        return m.kind == "country" and (inside or after_food)

    return tuple(m for m in mentions if not ordinary(m) and not dish_place(m))


def corrected(folded: str, words: Words) -> str:
    """`folded` with words that are not known, but close to a known word, replaced by it
    ("sparkeling" → "sparkling", "savignon" → "sauvignon")."""

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        known = word in words.known or word.startswith(words.prefixes)
        if len(word) < TYPO_MIN or known or not word.isalpha():
            return word
        found = process.extractOne(word, words.targets, scorer=fuzz.ratio, score_cutoff=TYPO_SCORE)
        return str(found[0]) if found and not _inflected(word, str(found[0])) else word

    return re.sub(r"[^\W\d_]+", fix, folded)


def _inflected(word: str, target: str) -> bool:
    """Another form of the same word, not a typo of it: one is the other and two letters or
    more ("regalar" was mended into "regalaron", bottles given, and a gift to buy was read as
    bottles had, unseen44). A typo's missing last letter ("sauvigno") is still mended."""
    short, long = sorted((word, target), key=len)
    return long.startswith(short) and len(long) - len(short) >= 2


def _clauses(folded: str, words: Words) -> list[tuple[int, int]]:
    """(start, end) of each clause: split at punctuation and at words like "but", "maybe"."""
    cuts = {0, len(folded)}
    cuts |= {m.start() for m in PUNCTUATION.finditer(folded)}
    cuts |= {m.start for m in words.markers.get("clause", Phrases.of(())).find(folded)}
    ordered = sorted(cuts)
    return [(a, b) for a, b in pairwise(ordered) if b > a]


def _mentions(folded: str, words: Words) -> tuple[Mention, ...]:
    negations = _negations(folded, words)
    after = [m.start for m in words.markers.get(NEGATION_AFTER, Phrases.of(())).find(folded)]
    moderates = [m for m in words.markers.get("moderate", Phrases.of(())).find(folded)]
    clauses = _clauses(folded, words)
    found: list[Mention] = []
    for kind, phrases in words.kinds.items():
        for match in phrases.find(folded):
            if _not_a_mention(kind, match, folded, words):
                continue
            clause = next(((a, b) for a, b in clauses if a <= match.start < b), (0, len(folded)))
            moderate = kind in ("sweetness", "body") and any(
                clause[0] <= m.start and m.end <= match.start for m in moderates
            )
            negated = not moderate and (
                any(clause[0] <= start < match.start for start in negations)
                or any(
                    match.end <= start <= min(clause[1], match.end + AFTER_CHARS) for start in after
                )
            )
            origin = origin_in(folded[match.start : match.end])
            found.append(
                Mention(kind, match.value, match.start, match.end, negated, moderate, origin)
            )
    # A name inside a longer name of another kind is part of it: "Franca" in the grape
    # "Touriga Franca" is not France ("França" in Portuguese).
    inside = [
        m
        for m in found
        if any(
            o.start <= m.start and m.end <= o.end and o.end - o.start > m.end - m.start
            for o in found
        )
    ]
    return tuple(sorted((m for m in found if m not in inside), key=lambda m: m.start))


def _negations(folded: str, words: Words) -> list[int]:
    """Where negations start, less the phrases that only look like one ("no idea")."""
    exceptions = [
        (m.start, m.end) for m in words.markers.get("not_negation", Phrases.of(())).find(folded)
    ]
    moderate = [
        (m.start, m.end) for m in words.markers.get("moderate", Phrases.of(())).find(folded)
    ]
    spans = exceptions + moderate
    return [
        m.start
        for m in words.markers.get(NEGATION, Phrases.of(())).find(folded)
        if not any(a <= m.start < b for a, b in spans)
    ]


def _not_a_mention(kind: str, match: Match, folded: str, words: Words) -> bool:
    """ "Sherry's birthday": a name. "red meat", "carne roja", "white fish": food, not wine."""
    if folded[match.end : match.end + 2] == "'s":
        return True
    if kind != "type":
        return False
    nouns = words.markers.get("food_noun")
    if nouns is None:
        return False
    after = folded[match.end :].lstrip()
    before = folded[: match.start].rstrip()
    next_word = re.match(r"[\w']+", after)
    last_word = re.search(r"[\w']+$", before)
    return any(
        w is not None and nouns.pattern.fullmatch(w.group(0)) is not None
        for w in (next_word, last_word)
    )


# "kr" and "kroner" are three currencies: the message's language says whose ("under 120 kr"
# in Danish was read as Swedish kronor, 10,80 € instead of 16 €).
KRONER = {"da": "DKK", "nb": "NOK", "sv": "SEK"}


def _price(folded: str, words: Words) -> Price | None:
    for piece in re.split(r"[.;!?\n]+", folded):
        found = read_price(piece, words.price)
        if found is not None:
            return found
    return None


def _reading(
    text: str,
    language: str,
    folded: str,
    mentions: tuple[Mention, ...],
    price: Price | None,
    words: Words,
    names: Names,
) -> Reading:
    filters, excluded = _filters(mentions)
    marked = _marked(folded, words)
    price = _as_said(price, marked, language)
    any_price, cheap = _price_freedom(marked, folded, words, language)
    if price is not None:
        filters.update(price.in_currency(names.currency).filters())
    elif cheap:
        filters["max_price"] = CHEAP
    # A question names no dish, budget or wish to be shown wines: "what's a good red for
    # turkey?" and "how much is a good Rioja, under 30?" are requests.
    dish = any(m.kind == "food" and not m.negated for m in mentions)
    asks = marked.get("asks", False) or dish or price is not None
    question = (_question(folded, words, mentions) or _term_question(text, marked, mentions)) and (
        not asks
    )
    reading = Reading(
        text=text,
        language=language,
        folded=folded,
        filters=filters,
        excluded=excluded,
        price=price,
        cheap=cheap,
        cheaper=marked.get("cheaper", False),
        pricier=marked.get("pricier", False),
        any_price=any_price,
        other=marked.get("other", False),
        reference=marked.get("reference", False),
        ordinal=_ordinal(folded, words),
        request=marked.get("request", False),
        question=question,
        courtesy=_courtesy(folded, words),
        likes=marked.get("like", False),
        dislikes=marked.get("dislike", False),
        owned=marked.get("owned", False),
        mentions=mentions,
    )
    wine_words = marked.get("wine", False) or marked.get("term", False)
    return _with_topic(reading, wine_words, marked.get("recipe", False))


FLAGS = ("cheap", "cheaper", "pricier", "any_price", "other", "reference")


def _as_said(price: Price | None, marked: Mapping[str, bool], language: str) -> Price | None:
    """The price in the person's kroner, marked as their usual budget when they say so."""
    if price is not None and price.currency in KRONER.values() and language in KRONER:
        price = replace(price, currency=KRONER[language])
    if price is not None and marked.get("own_budget"):
        price = replace(price, usual=True)
    return price


def _price_freedom(
    marked: Mapping[str, bool], folded: str, words: Words, language: str
) -> tuple[bool, bool]:
    """Whether the words lift any price bound ("forget the budget": from the lexicon, or the
    short table of a language without one), and whether they ask for a cheap wine."""
    any_price = marked.get("any_price", False) or (
        language not in COVERED and price_words(folded) == "any_price"
    )
    cheap = not any_price and (marked.get("cheap", False) or _nothing_dear(folded, words))
    return any_price, cheap


def _nothing_dear(folded: str, words: Words) -> bool:
    """ "Nothing pricey", "nichts Teures", "rien de trop cher": an expensive word turned down in
    its clause asks for a cheap wine. One inside a cheap or pricier phrase of its own ("not too
    expensive", "more expensive") is read by that phrase."""
    dear = words.markers.get("dear")
    if dear is None:
        return False
    phrases = [words.markers[k] for k in ("cheap", "pricier") if k in words.markers]
    owned = [(m.start, m.end) for p in phrases for m in p.find(folded)]
    moderate = words.markers.get("moderate", Phrases.of(()))
    negations = [*_negations(folded, words), *(m.start for m in moderate.find(folded))]
    clauses = _clauses(folded, words)
    for match in dear.find(folded):
        if any(a <= match.start and match.end <= b for a, b in owned):
            continue
        start = next((a for a, b in clauses if a <= match.start < b), 0)
        if any(start <= n < match.start for n in negations):
            return True
    return False


def _marked(folded: str, words: Words) -> dict[str, bool]:
    """Which marker words the text uses; a flag inside a longer flag's phrase does not count
    ("niet te duur" is cheap, not "te duur", too expensive)."""
    marked = {k: p.pattern.search(folded) is not None for k, p in words.markers.items()}
    spans = {
        k: _unnegated(words.markers[k].find(folded), folded, words) for k in FLAGS if marked.get(k)
    }
    for key, matches in spans.items():
        longer = [m for k, ms in spans.items() if k != key for m in ms]
        marked[key] = any(
            not any(
                o.start <= m.start and m.end <= o.end and o.end - o.start > m.end - m.start
                for o in longer
            )
            for m in matches
        )
    return marked


def _unnegated(matches: Iterable[Match], folded: str, words: Words) -> list[Match]:
    """Less the comparisons turned down in their clause before an amount: "not more expensive
    than 20", "que no sea más caro de 20", "не дороже 20" set a ceiling (the price reader's);
    they do not ask for a pricier wine. "Don't you have anything cheaper?" still asks."""
    negations = _negations(folded, words)
    clauses = _clauses(folded, words)

    def bound(match: Match) -> bool:
        start = next((a for a, b in clauses if a <= match.start < b), 0)
        negated = any(start <= n < match.start for n in negations)
        after = PUNCTUATION.split(folded[match.end :], maxsplit=1)[0]  # "than 20" ("dan" cuts)
        return negated and re.search(r"\d", after) is not None

    return [m for m in matches if not bound(m)]


def _filters(mentions: Sequence[Mention]) -> tuple[dict[str, Any], dict[str, frozenset[str]]]:
    filters: dict[str, Any] = {}
    refused: dict[str, set[str]] = {}
    for kind in ("type", "sweetness", "body", "food", "grape", "country", "region"):
        mine = [m for m in mentions if m.kind == kind]
        wanted = list(dict.fromkeys(m.value for m in mine if not m.negated and not m.moderate))
        for m in mine:
            # "Something bubbly that isn't Champagne": the place is refused, not the style.
            kept = m.origin is not None and m.value in wanted
            if (m.negated or m.moderate) and not kept:
                refused.setdefault(kind, set()).update(_refusal(m))
        wanted = [v for v in wanted if v not in refused.get(kind, set())]
        if kind == "food" and len(wanted) > 1:
            wanted = [v for v in wanted if v != "barbecue"] or wanted  # the dish beats the grill
        if kind in ANY_OF and len(wanted) > 1:
            filters[ANY_OF[kind]] = wanted  # "Germany or Austria", "a red or a rosé": either
        elif kind in ("sweetness", "body") and len(wanted) > 1:
            continue  # "red or white": the words do not decide
        elif wanted:
            filters[kind] = wanted[0]
    _with_origins(filters, mentions, refused.get("country", set()))
    return filters, {k: frozenset(v) for k, v in refused.items()}


def _with_origins(filters: dict[str, Any], mentions: Sequence[Mention], refused: set[str]) -> None:
    """A style named for its place asks for that place ("um vinho do Porto": Portugal), unless
    the words name a country themselves."""
    if "country" in filters or "countries" in filters:
        return
    origins = [m.origin for m in mentions if m.origin and not m.negated and m.origin not in refused]
    origins = list(dict.fromkeys(origins))
    if len(origins) == 1:
        filters["country"] = origins[0]
    elif origins:
        filters["countries"] = origins


def _refusal(mention: Mention) -> set[str]:
    """What a negated or moderated mention turns down: "not sweet" and "not too sweet" turn
    down both sweet levels; "not too dry" turns down dry."""
    if mention.kind == "sweetness" and mention.value in SWEET:
        return set(SWEET)
    if mention.kind == "body" and mention.moderate:
        return set()  # "not too heavy": no body is refused outright
    return {mention.value}


def _question(folded: str, words: Words, mentions: Sequence[Mention]) -> bool:
    """A general question: a sentence opens with a question word ("what is…", "wie hoch…"),
    and no other sentence names a wine wish ("what's in my cellar? a malbec" is a request)."""
    phrases = words.markers.get("question")
    if phrases is None:
        return False
    asked = False
    for start, end in _sentences(folded):
        opening = " ".join(folded[start:end].lstrip("¿¡ ").split()[: LATE + 2])
        if phrases.pattern.match(opening) is not None or _subject_first(
            folded, start, end, phrases, mentions
        ):
            asked = True
        elif any(start <= m.start < end for m in mentions):
            return False
    return asked


def _term_question(text: str, marked: Mapping[str, bool], mentions: Sequence[Mention]) -> bool:
    """A question about a word of wine-making that names no wish: "¿Qué diferencia hay entre
    un crianza y un reserva?", "Cosa significa DOCG?". The question words of a language cannot
    list every phrasing; a term with a question mark and nothing to search by is asked about,
    not asked for."""
    return marked.get("term", False) and not mentions and text.rstrip().endswith(("?", "？"))


def _subject_first(
    folded: str, start: int, end: int, phrases: Phrases, mentions: Sequence[Mention]
) -> bool:
    """A yes/no question put subject first: a wine named first (after an article at most),
    then a question phrase of two words or more ("vinho tinto faz mesmo bem ao coração?",
    "le vin rouge est-il bon pour la santé?"). One word after the wine is not enough: "un
    tinto que se puede beber frío?" asks for a wine."""
    if not folded[start:end].rstrip().endswith("?"):
        return False
    lead = min((m for m in mentions if start <= m.start < end), key=lambda m: m.start, default=None)
    if lead is None or len(folded[start : lead.start].split()) > 1:
        return False
    found = phrases.pattern.match(folded[lead.end : end].lstrip(" ,"))
    return found is not None and any(ch in found.group(0) for ch in " -")


def _sentences(folded: str) -> list[tuple[int, int]]:
    cuts = [0, *(m.end() for m in re.finditer(r"[.!?]+\s*", folded)), len(folded)]
    return [(a, b) for a, b in pairwise(sorted(set(cuts))) if b > a]


def _courtesy(folded: str, words: Words) -> bool:
    phrases = words.markers.get("courtesy")
    rest = phrases.pattern.sub(" ", folded) if phrases else folded
    return bool(re.fullmatch(r"[\W\d_]*", rest)) and rest != folded


def _ordinal(folded: str, words: Words) -> int | None:
    found = next(iter(words.ordinals.find(folded)), None)
    if found is None:
        return None
    return {"first": 0, "second": 1, "third": 2, "last": -1}.get(str(found.value))


def _with_topic(reading: Reading, wine_words: bool, recipe: bool = False) -> Reading:
    """Whether the message is about wine: wine words, a style, food, grape, region or price,
    a follow-up, something turned down, or a country with a request ("anything from
    Hungary?"); a country in a question is not ("what's the capital of Portugal?"), nor is a
    dish in a request for its recipe with no word of wine ("a recipe for apple strudel")."""
    filters = reading.filters
    own = any(k in filters for k in ("type", "types", "sweetness", "body", "grape", "region"))
    own = own or ("food" in filters and (wine_words or not recipe))
    priced = "max_price" in filters or "min_price" in filters
    refused = any(reading.excluded.get(k) for k in ("type", "country", "sweetness"))
    placed = ("country" in filters or "countries" in filters) and reading.request
    about = wine_words or own or priced or refused or placed or reading.follow_up
    return replace(reading, about_wine=about, wine_words=wine_words)


def read_turn(
    text: str, names: Names = Names(), earlier: Sequence[str] = (), hint: str | None = None
) -> Reading:
    """The turn's message read once, with what its conversation asked before."""
    reading = read(text, names, earlier=earlier, hint=hint)
    before = [read(t, names, language=reading.language) for t in earlier[-4:]]
    subject = subject_of(before)
    if subject and _only_a_place(reading):
        # "Heb je er ook een uit Italië?" after a red for a stew: that kind of wine, from there.
        kept = {k: v for k, v in subject.items() if k not in PLACES}
        reading = replace(reading, filters={**kept, **reading.filters})
    if not subject:
        # No subject in filters: the latest earlier wine request's words still rank.
        asked = [b.text for b in before[-2:] if b.wine_request]
        subject = {"query": asked[-1][:200]} if asked else {}
    return replace(
        reading,
        earlier_subject=subject,
        earlier_price=price_of(before),
        earlier_texts=tuple(earlier[-2:]),
    )


PLACES = ("country", "countries", "region")


def _only_a_place(reading: Reading) -> bool:
    """A place is all the message names: no style, food or grape, and no word for wine ("any
    from Italy?", "А что-нибудь из Германии?"); "any wines from Georgia?" starts afresh."""
    named = {k for k in reading.filters if k not in ("min_price", "max_price")}
    return bool(named) and named <= set(PLACES) and not reading.wine_words


def subject_of(readings: Sequence[Reading]) -> dict[str, Any]:
    """The filters of the latest earlier request that had a subject of its own."""
    for reading in reversed(readings):
        if reading.subject:
            return {k: v for k, v in reading.filters.items() if k not in ("min_price", "max_price")}
    return {}


def price_of(readings: Sequence[Reading]) -> dict[str, float]:
    """The latest price bound the conversation named (a budget holds until changed)."""
    for reading in reversed(readings):
        if reading.any_price:  # "forget the budget" ends the one before it
            return {}
        bounds = {k: v for k, v in reading.filters.items() if k in ("min_price", "max_price")}
        if bounds and not reading.cheap:
            return bounds
    return {}


TAKEN = ("body", "type", "sweetness", "food", "grape", "country")


def take_filters(text: str, names: Names = Names()) -> tuple[dict[str, str], str]:
    """Style, body, sweetness, food, grape and country words of free text as filters, and the
    words left: "full bodied red for steak" -> ({"type": "red", "body": "full", "food":
    "beef"}, "for"). A filter is an index walk where the same words as free text rank
    thousands of rows. A query typed on the command line is read in the covered language whose
    own words it uses most, else English: the detector's models would cost seconds, and a query
    with no word of a list has nothing but names (grapes, regions) to take anyway."""
    votes = votes_for(fold(text))
    best = max(votes, key=lambda code: votes[code], default="en")
    reading = read(text, names, language=best if votes.get(best) else "en")
    taken = {k: v for k, v in reading.filters.items() if k in TAKEN and isinstance(v, str)}
    spans = [
        (m.start, m.end)
        for m in reading.mentions
        if taken.get(m.kind) == m.value and not (m.negated or m.moderate)
    ]
    rest = reading.folded
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    return taken, " ".join(re.sub(r"[^\w\s-]", " ", rest).split())
