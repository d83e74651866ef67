"""The taste profile: what a person likes and dislikes, learned without a model call from what
they say about themselves ("I don't drink red", "I love Riesling", "my budget is 20 euros") and
from their 👍/👎, shown to the model as a short note, and applied as search defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sommelier.catalog.understanding import Names, read_words, refused
from sommelier.catalog.vocabulary import fold

KINDS = ("type", "grape", "country", "region")
MAX_PER_KIND = 6  # a profile stays a few lines

# Statements about the person, not one-off requests: "not from France" tonight is not a
# dislike of France, "I don't drink French wine" is.
DISLIKE = re.compile(
    r"\b(?:i|we)\s+(?:(?:really\s+)?(?:don'?t|do not|never|can'?t|cannot)\s+"
    r"(?:drink|like|enjoy|stand|have|do)|hate|dislike|avoid|am allergic to)\b"
)
LIKE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+)?(?:love|like|prefer|enjoy|adore|am into|usually drink)\b"
)
BUDGET = re.compile(r"\b(?:my|our)\s+budget\b|\b(?:i|we)\s+(?:usually|never|rarely)\s+spend\b")


@dataclass(slots=True)
class Taste:
    likes: dict[str, list[str]] = field(default_factory=dict)
    dislikes: dict[str, list[str]] = field(default_factory=dict)
    max_price: float | None = None

    @classmethod
    def of(cls, row: Any) -> Taste:
        """From a `taste_profiles` row (or None: nothing known yet)."""
        if row is None:
            return cls()
        return cls(_lists(row.likes), _lists(row.dislikes), row.max_price)

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


def says_something_about_taste(text: str) -> bool:
    folded = fold(text)
    return bool(DISLIKE.search(folded) or LIKE.search(folded) or BUDGET.search(folded))


def learn_from_words(taste: Taste, text: str, names: Names) -> bool:
    """Update `taste` from a statement about the person; True when something changed."""
    folded = fold(text)
    wanted = read_words(text, names)
    changed = False
    if DISLIKE.search(folded):
        for value in wanted.excluded_types:
            changed |= taste.add("dislike", "type", value)
        for value in wanted.excluded_countries:
            changed |= taste.add("dislike", "country", value)
        for kind, values in refused(text, names).items():
            for value in values:
                changed |= taste.add("dislike", kind, value)
    if LIKE.search(folded):
        for kind in KINDS:
            liked = wanted.filters.get(kind)
            if isinstance(liked, str):
                changed |= taste.add("like", kind, liked)
    budget = wanted.filters.get("max_price")
    if BUDGET.search(folded) and isinstance(budget, float):
        taste.max_price = budget
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
        lines.append(f"Their usual budget: up to {taste.max_price:g}.")
    return "What this person told you before: " + " ".join(lines) if lines else ""


def describe(taste: Taste) -> list[str]:
    """The profile for the person (`/profile`)."""
    lines = []
    for side, label in ((taste.likes, "You like"), (taste.dislikes, "You'd rather avoid")):
        for kind in (*KINDS, "wine"):
            if side.get(kind):
                lines.append(f"{label} ({kind}): {', '.join(side[kind])}")
    if taste.max_price is not None:
        lines.append(f"Your budget: up to {taste.max_price:g}")
    return lines


def as_context(taste: Taste) -> dict[str, Any]:
    """For the search tool's defaults (catalog.tool_arguments.PROFILE): hard dislikes, the
    budget, and likes (a request with no subject of its own searches for them)."""
    return {
        "exclude_types": list(taste.dislikes.get("type", [])),
        "exclude_countries": list(taste.dislikes.get("country", [])),
        "exclude_ids": list(taste.dislikes.get("wine", [])),
        "likes": [
            v for k in ("grape", "type", "region", "country") for v in taste.likes.get(k, [])
        ],
        "max_price": taste.max_price,
    }
