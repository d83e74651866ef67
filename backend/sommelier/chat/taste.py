"""The taste profile: what a person likes and dislikes, learned without a model call from what
they say about themselves, in any language the word lists cover ("I don't drink red", "Ich
liebe Riesling", "mi presupuesto es 20 euros") and from their 👍/👎, shown to the model as a
short note, and applied as search defaults. A budget keeps the currency it was said in.

Statements about the person, not one-off requests, are learned: "not from France" tonight is
not a dislike of France, "I don't drink French wine" is (the lexicons' `like`, `dislike` and
`own_budget` phrases)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sommelier.catalog.prices import Price
from sommelier.catalog.reading import Reading
from sommelier.catalog.vocabulary import fold
from sommelier.chat.labels import TYPES
from sommelier.i18n.translations import N_, country, money, translator

KINDS = ("type", "grape", "country", "region")
MAX_PER_KIND = 6  # a profile stays a few lines


@dataclass(slots=True)
class Taste:
    likes: dict[str, list[str]] = field(default_factory=dict)
    dislikes: dict[str, list[str]] = field(default_factory=dict)
    max_price: float | None = None
    currency: str | None = None  # the budget's (None: the catalog's)

    @classmethod
    def of(cls, row: Any) -> Taste:
        """From a `taste_profiles` row (or None: nothing known yet)."""
        if row is None:
            return cls()
        return cls(_lists(row.likes), _lists(row.dislikes), row.max_price, row.budget_currency)

    @property
    def budget(self) -> Price | None:
        return (
            None if self.max_price is None else Price(high=self.max_price, currency=self.currency)
        )

    def is_empty(self) -> bool:
        return (
            not any(self.likes.values())
            and not any(self.dislikes.values())
            and (self.max_price is None)
        )

    def add(self, side: str, kind: str, value: str) -> bool:
        """Remember one value; the other side forgets it ("I love red" after "no red")."""
        mine, other = (self.likes, self.dislikes) if side == "like" else (self.dislikes, self.likes)
        if value in other.get(kind, []):
            other[kind].remove(value)
        values = mine.setdefault(kind, [])
        if value in values:
            return False
        values.append(value)
        del values[:-MAX_PER_KIND]
        return True


def _lists(raw: dict[str, Any]) -> dict[str, list[str]]:
    return {k: [str(v) for v in vs] for k, vs in (raw or {}).items() if isinstance(vs, list)}


def says_something_about_taste(reading: Reading) -> bool:
    usual = reading.price is not None and reading.price.usual
    return reading.likes or reading.dislikes or usual


def learn_from_words(taste: Taste, reading: Reading) -> bool:
    """Update `taste` from a statement about the person; True when something changed."""
    changed = False
    if reading.dislikes:
        for kind in KINDS:
            for value in sorted(reading.refused(kind)):
                changed |= taste.add("dislike", kind, value)
    if reading.likes:
        for kind in KINDS:
            liked = reading.filters.get(kind)
            if isinstance(liked, str):
                changed |= taste.add("like", kind, liked)
    price = reading.price
    if price is not None and price.usual and price.high is not None:
        taste.max_price, taste.currency = price.high, price.currency
        changed = True
    return changed


def learn_from_feedback(taste: Taste, wine: dict[str, Any], value: int) -> bool:
    """👍 on a card: its grape and country are liked. 👎: that wine is not shown again."""
    if value < 0:
        return taste.add("dislike", "wine", str(wine["id"]))
    changed = False
    if wine.get("grape"):
        changed |= taste.add("like", "grape", str(wine["grape"]))
    if wine.get("country"):
        changed |= taste.add("like", "country", fold(str(wine["country"])))
    return changed


def note(taste: Taste) -> str:
    """The profile for the model: a few lines, only what is known."""
    lines = []
    likes = ", ".join(v for k in KINDS for v in taste.likes.get(k, []))
    dislikes = ", ".join(v for k in KINDS for v in taste.dislikes.get(k, []))
    if likes:
        lines.append(f"They like: {likes}.")
    if dislikes:
        lines.append(f"They do not want: {dislikes} (unless they ask for it).")
    if taste.max_price is not None:
        lines.append(f"Their usual budget: up to {taste.max_price:g} {taste.currency or ''}.")
    return "What this person told you before: " + " ".join(lines) if lines else ""


LIKED = {
    "type": N_("Styles you like: {values}"),
    "grape": N_("Grapes you like: {values}"),
    "country": N_("Countries you like: {values}"),
    "region": N_("Regions you like: {values}"),
}
AVOIDED = {
    "type": N_("Styles you'd rather avoid: {values}"),
    "grape": N_("Grapes you'd rather avoid: {values}"),
    "country": N_("Countries you'd rather avoid: {values}"),
    "region": N_("Regions you'd rather avoid: {values}"),
    "wine": N_("Wines you gave a 👎: {values}"),
}
BUDGET = N_("Your budget: up to {amount}")


def describe(taste: Taste, language: str | None = None, currency: str | None = None) -> list[str]:
    """The profile for the person (`/profile`), in their language; a budget in the currency
    they said it in (else the catalog's, `currency`)."""
    t = translator(language)
    lines = []
    for side, labels in ((taste.likes, LIKED), (taste.dislikes, AVOIDED)):
        for kind, label in labels.items():
            if side.get(kind):
                values = [_shown(kind, v, language) for v in side[kind]]
                lines.append(t(label).format(values=", ".join(values)))
    if taste.max_price is not None:
        amount = money(taste.max_price, taste.currency or currency, language)
        lines.append(t(BUDGET).format(amount=amount))
    return lines


def _shown(kind: str, value: str, language: str | None) -> str:
    if kind == "country":
        return country(value, language)
    if kind == "type":
        return translator(language)(TYPES.get(value, value))
    return value.title() if kind in ("grape", "region") else value


def as_context(taste: Taste, currency: str = "EUR") -> dict[str, Any]:
    """For the search tool's defaults (catalog.tool_arguments.PROFILE): hard dislikes, the
    budget (in the catalog's currency), and likes (a request with no subject of its own
    searches for them)."""
    budget = taste.budget
    return {
        "exclude_types": list(taste.dislikes.get("type", [])),
        "exclude_countries": list(taste.dislikes.get("country", [])),
        "exclude_ids": list(taste.dislikes.get("wine", [])),
        "likes": [
            v for k in ("grape", "type", "region", "country") for v in taste.likes.get(k, [])
        ],
        "max_price": None if budget is None else budget.in_currency(currency).high,
    }
