"""Prices in a person's words: "under 20", "max 25 Euro", "no más de 20 €", "до 30 евро",
"between 10 and 20", "about 30 quid", "a tenner". A budget is an upper bound; "around" is a
range. Amounts keep the currency they were said in and are converted to the catalog's for the
search. Pure functions over folded text (lexicon.fold)."""

from __future__ import annotations

import re
import tomllib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from itertools import pairwise

from text_to_num import alpha2digit

from sommelier.catalog.lexicon import Lexicon, Match, Phrases, lexicon
from sommelier.i18n.languages import COVERED

AROUND = 0.3  # "around 30" is 21–39
# A number not glued to a word of letters ("sm-001", "A4") nor an ordinal ("the 2nd one"); in
# Chinese and Japanese, written without spaces, it may follow a letter ("预算200元").
NUMBER = re.compile(
    r"(?<![a-zA-Z\u00c0-\u024f\u0370-\u04ff\d.,])"
    r"(\d{1,3}(?:[ .]\d{3})+|\d+(?:[.,]\d{1,2})?)(?![\d])(?!(?:st|nd|rd|th)\b)"
)
YEARS = range(1900, 2101)
# The units Chinese, Japanese and Korean count large amounts in, written after the number.
MYRIADS = {"万": 10_000, "萬": 10_000, "만": 10_000, "千": 1_000, "천": 1_000}
# Words that may stand between a price phrase and its number: "sotto i 12", "under €20".
FILLER = re.compile(r"^(?:\s|the|a|i|de|los|las|les|le|la|di|dei|da|del|die|den|€|\$|£|₽)*$")


# The languages text2num reads numbers in ("para ocho personas": unseen50's eight guests were
# not counted, and the answer was given per bottle), and those whose numerals cn2an reads
# ("三百块以内", "五千円": no budget was read).
SPELLED = frozenset({"en", "fr", "es", "pt", "de", "it", "nl"})
HAN_NUMERALS = frozenset({"zh", "ja"})


def in_digits(text: str, language: str) -> str:
    """The text with its numbers written as words in digits ("douze" -> "12", "三百" -> "300");
    numbers below three stay words ("a bottle for two" is no party)."""
    if language in SPELLED:
        return str(alpha2digit(text, language))
    if language in HAN_NUMERALS:
        import cn2an  # a quarter of a second to load: only for a message that needs it

        with warnings.catch_warnings():  # it warns of what it leaves as it is ("两三百")
            warnings.simplefilter("ignore")
            return str(cn2an.transform(text, "cn2an"))
    return text


@dataclass(frozen=True)
class Price:
    """Bounds in `currency` (None: the person named none, so the catalog's)."""

    low: float | None = None
    high: float | None = None
    currency: str | None = None
    usual: bool = False  # the person's usual budget ("my budget is 25"): worth remembering

    def in_currency(self, target: str) -> Price:
        rate = exchange(self.currency or target, target)
        low = None if self.low is None else round(self.low * rate, 2)
        high = None if self.high is None else round(self.high * rate, 2)
        return Price(low, high, target, self.usual)

    def filters(self) -> dict[str, float]:
        found: dict[str, float] = {}
        if self.low is not None:
            found["min_price"] = self.low
        if self.high is not None:
            found["max_price"] = self.high
        return found


@cache
def _euros() -> dict[str, float]:
    text = resources.files("sommelier.catalog").joinpath("lexicon/currencies.toml").read_text()
    return {k: float(v) for k, v in tomllib.loads(text)["euros"].items()}


def exchange(source: str, target: str) -> float:
    """How many units of `target` one unit of `source` is worth (1.0 when either is unknown)."""
    rates = _euros()
    if source == target or source not in rates or target not in rates:
        return 1.0
    return rates[source] / rates[target]


@dataclass(frozen=True)
class PriceWords:
    """One reading's compiled price phrases (from the lexicons in use)."""

    upper: Phrases
    upper_after: Phrases
    lower: Phrases
    around: Phrases
    around_after: Phrases
    between: Phrases
    joiner: Phrases
    budget: Phrases
    counted: Phrases  # "6 bottles", "3 wines": a number of them, not a price
    negation: Phrases
    currency: Phrases
    amount: Phrases

    def phrases(self) -> tuple[Phrases, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))

    @classmethod
    def of(cls, lexicons: Sequence[Lexicon]) -> PriceWords:
        def phrases(key: str, group: str = "price") -> Phrases:
            source = (lx.price if group == "price" else lx.words for lx in lexicons)
            return Phrases.of((p, key) for table in source for p in table.get(key, ()))

        return cls(
            upper=phrases("upper"),
            upper_after=phrases("upper_after"),
            lower=phrases("lower"),
            around=phrases("around"),
            around_after=phrases("around_after"),
            between=phrases("between"),
            # Between two numbers any language's "and" joins a range ("10 et 20", "10 y 20"):
            # harmless there, and a misjudged language costs no range.
            joiner=Phrases.of((p, "and") for code in COVERED for p in lexicon(code).price["and"]),
            budget=phrases("budget", "words"),
            counted=phrases("counted", "words"),
            negation=phrases("negation", "words"),
            currency=Phrases.of(
                (p, code) for lx in lexicons for code, ps in lx.currencies.items() for p in ps
            ),
            amount=Phrases.of((p, v) for lx in lexicons for p, v in lx.amounts.items()),
        )


@dataclass(frozen=True)
class _Amount:
    start: int
    end: int
    value: float
    currency: str | None


def _number(raw: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:[ .]\d{3})+", raw):
        return float(re.sub(r"[ .]", "", raw))
    return float(raw.replace(",", "."))


def _amounts(text: str, words: PriceWords) -> list[_Amount]:
    """Numbers that are money: with a currency right before or after, or any number (a price
    phrase then decides); years without a currency are not money."""
    found: list[_Amount] = []
    currencies = list(words.currency.find(text))
    for match in NUMBER.finditer(text):
        value, end = _number(match.group(1)), match.end()
        if text[end : end + 1] in MYRIADS:  # "1万円": ten thousand yen
            value, end = value * MYRIADS[text[end]], end + 1
        currency = _currency_near(text, match.start(), end, currencies)
        if currency is None and value in YEARS and float(value).is_integer():
            continue
        found.append(_Amount(match.start(), end, value, currency))
    for slang in words.amount.find(text):  # "a tenner"
        value, currency = slang.value
        found.append(_Amount(slang.start, slang.end, value, currency))
    return sorted(found, key=lambda a: a.start)


JOINED = re.compile(r"\s+de\s+")


def _currency_near(text: str, start: int, end: int, currencies: list[Match]) -> str | None:
    for match in currencies:
        # Right before or after the number, or begun inside it: "3만원" is 3 and "만원" (ten
        # thousand won), one word in Korean.
        if 0 <= start - match.end <= 1 or start < match.start <= end + 1:
            return str(match.value)
        # Romanian joins a number of 20 or more to its noun: "150 de lei".
        if match.start > end and JOINED.fullmatch(text, end, match.start):
            return str(match.value)
    return None


def _ends_with(phrases: Phrases, before: str) -> bool:
    """Whether `before` ends with one of the phrases (and at most filler words)."""
    return any(FILLER.match(before[m.end :]) for m in phrases.find(before))


def read_price(clause: str, words: PriceWords) -> Price | None:
    """The price bounds one clause asks for, or None."""
    amounts = _amounts(clause, words)
    if not amounts:
        return None
    currency = next((a.currency for a in amounts if a.currency), None)
    for first, second in pairwise(amounts):
        joined = words.joiner.pattern.fullmatch(clause[first.end : second.start].strip())
        priced = _ends_with(words.between, clause[: first.start]) or currency is not None
        if joined and priced:  # "between 10 and 20", "10-20 euros"
            low, high = sorted((first.value, second.value))
            return Price(low, high, currency)
    budget = words.budget.pattern.search(clause) is not None
    for amount in amounts:
        before, after = clause[: amount.start], clause[amount.end :]
        price = _bound(amount, before, after, words, budget)
        if price is not None:
            return Price(price.low, price.high, amount.currency or currency)
    return None


def _bound(
    amount: _Amount, before: str, after: str, words: PriceWords, budget: bool
) -> Price | None:
    value = amount.value
    if amount.currency is None and words.counted.pattern.match(after.lstrip()):
        return None  # "I've got 6 bottles of…": how many, whatever a budget word says
    head = _without_currency(after, words)
    upper = _ends_with(words.upper, before) or _not_above(before, words)
    if _ends_with(words.lower, before) and not upper:
        return Price(low=value)
    if upper or words.upper_after.pattern.match(head):
        return Price(high=value)
    if budget:
        return Price(high=value)  # "my budget is about 30": a budget is an upper bound
    if _ends_with(words.around, before) or words.around_after.pattern.match(head):
        return Price(low=round(value * (1 - AROUND), 2), high=round(value * (1 + AROUND), 2))
    if amount.currency is not None:
        return Price(high=value)  # "a red, 20 euros": what they mean to spend at most
    return None


def _not_above(before: str, words: PriceWords) -> bool:
    """A lower-bound phrase negated in its clause is an upper bound: "nicht über 20", "pas
    au-dessus de 20", "not more expensive than 20", "I don't want to spend more than 20", "que
    no sea más caro de 20"."""
    return any(
        FILLER.match(before[m.end :]) and words.negation.pattern.search(_clause_of(before, m.start))
        for m in words.lower.find(before)
    )


def _clause_of(text: str, end: int) -> str:
    """The words before `end` back to the last comma (a price phrase's clause)."""
    return text[:end].rsplit(",", 1)[-1]


def _without_currency(after: str, words: PriceWords) -> str:
    """The words after a number, without the currency that follows it ("20 euros max")."""
    head = after.lstrip()
    match = words.currency.pattern.match(head)
    return head[match.end() :].lstrip() if match else head


@cache
def _price_words() -> dict[str, tuple[str, ...]]:
    text = resources.files("sommelier.catalog").joinpath("lexicon/price_words.toml").read_text()
    return {k: tuple(v) for k, v in tomllib.loads(text).items()}


def price_words(folded: str) -> str | None:
    """ "cheaper", "pricier" or "cheap" by the words of a language without a word list (the
    table is folded; so must `folded` be), or None."""
    return next(
        (kind for kind, words in _price_words().items() if any(w in folded for w in words)),
        None,
    )
