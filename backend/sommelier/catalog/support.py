"""What a wine's catalog row supports of a request: the reasons a reply may give for it.

The search computes them for each wine it returns (`facts[id]["reasons"]`), the answer's grammar
lets the model choose only among them (chat/reply.py), and chat/reasons.py says them in
translated templates. A reason is never the model's words, so it cannot be false.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from sommelier.catalog.lexicon import fold, narrower_regions
from sommelier.catalog.search import SearchFilters
from sommelier.db.models import Wine

Reason = Literal["pairs_with_dish", "as_asked", "in_budget", "well_rated"]
REASONS: tuple[str, ...] = get_args(Reason)
WELL_RATED = 4.0
# The wishes "as_asked" names: what the person asked of the wine itself.
ASKED = ("sweetness", "type", "types", "grape", "region", "country", "countries")
_WISHES = (*ASKED, "food", "max_price")


def stated(filters: SearchFilters, relaxed: Mapping[str, Any]) -> dict[str, Any]:
    """The wishes a search held that the person stated: less the model's guesses and less what
    it gave up."""
    dropped = set(filters.guessed) | set(relaxed)
    return {
        key: value
        for key in _WISHES
        if key not in dropped and (value := getattr(filters, key)) not in (None, "", [])
    }


def supported(wine: Wine, asked: Mapping[str, Any]) -> list[str]:
    """The reasons `wine`'s row supports for a request that asked `asked`, best first."""
    found = []
    if dish(wine, asked.get("food")):
        found.append("pairs_with_dish")
    if met(wine, asked):
        found.append("as_asked")
    budget = asked.get("max_price")
    if wine.price is not None and isinstance(budget, int | float) and wine.price <= budget:
        found.append("in_budget")
    if wine.rating_avg is not None and wine.rating_avg >= WELL_RATED:
        found.append("well_rated")
    return found


def dish(wine: Wine, food: Any) -> str | None:
    """The dish asked for, when the wine's row pairs it."""
    if not isinstance(food, str) or not food:
        return None
    wanted = fold(food)
    pairs = [fold(p) for p in wine.food_pairings]
    return wanted if any(wanted in p or p in wanted for p in pairs) else None


def met(wine: Wine, asked: Mapping[str, Any]) -> dict[str, Any]:
    """The wishes of `asked` about the wine itself that its row meets; of an either-or wish,
    the one it meets ("red or white?" asked: a red "is red, as you asked", not "is red or
    white", unseen54)."""
    kept = {k: v for k, v in asked.items() if k in ASKED and _meets(wine, k, v)}
    return {k: _which(wine, v) if isinstance(v, list) else v for k, v in kept.items()}


def _which(wine: Wine, values: list[Any]) -> Any:
    own = {fold(wine.type), fold(wine.country or "")}
    return next((v for v in values if fold(str(v)) in own), values)


def _meets(wine: Wine, key: str, value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    folded = {fold(str(v)) for v in values}
    if key in ("type", "types"):
        return fold(wine.type) in folded
    if key == "sweetness":
        return fold(wine.sweetness or "") in folded
    if key == "grape":
        return any(fold(g) in folded for g in wine.grapes)
    if key == "region":
        region = fold(wine.region or "")
        return region in folded or any(region in narrower_regions().get(v, ()) for v in folded)
    return fold(wine.country or "") in folded
