"""Normalising what a model wrote into the catalog tools' arguments, before validation.

The person's words win. A filter the model wrote is kept only where the words support it; an
unsupported value (a country nobody mentioned) moves to the free-text query, where it can rank
wines but not exclude them; prose and unknown values are dropped. Follow-ups mean something:
"cheaper" is below the cheapest wine of the previous reply, "something different" leaves out
the wines already shown, and a follow-up without a subject of its own keeps the previous
request's ("a red for steak", then "under 15 euros?").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sommelier.agent.messages import is_person, text_of
from sommelier.agent.turn import TurnInput
from sommelier.catalog.understanding import Names, Wanted, is_follow_up, read_words
from sommelier.catalog.vocabulary import (
    BODIES,
    BODY_ALIASES,
    SWEETNESS,
    SWEETNESS_ALIASES,
    TYPE_ALIASES,
    WINE_TYPES,
    canonical_choice,
    fold,
)

PROFILE = "taste_profile"  # TurnInput.context key: the person's hard dislikes and budget
TEXT_FILTERS = ("country", "region", "grape", "food")
CHOICES = {
    "type": (WINE_TYPES, TYPE_ALIASES),
    "sweetness": (SWEETNESS, SWEETNESS_ALIASES),
    "body": (BODIES, BODY_ALIASES),
}
MAX_FILTER_WORDS = 3  # "Cabernet Sauvignon" is a grape; "French wines are served at…" is prose
MAX_QUERY_WORDS = 6
HIDDEN = ("exclude_ids", "exclude_types", "exclude_countries", "order")
AGENT_LIMIT = 3  # wines per search the model reads: enough to choose 1 or 2 from, and each
# costs a small local model about 2.5 s of reading on 2 cores


@dataclass(frozen=True, slots=True)
class Shown:
    """A wine of the previous reply."""

    id: str
    type: str
    price: float | None


def _short(value: Any, words: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip() if len(value.split()) <= words else None


def _said(value: str, said: str) -> bool:
    return bool(value) and fold(value) in said


def keep_supported(raw: dict[str, Any], said: str) -> tuple[dict[str, Any], list[str]]:
    """(filters the words support, other short values for the free-text query)."""
    kept: dict[str, Any] = {}
    extra: list[str] = []
    for key, (choices, aliases) in CHOICES.items():
        value = raw.get(key)
        choice = canonical_choice(value, choices, aliases) if isinstance(value, str) else None
        if choice and _said(choice, said):
            kept[key] = choice
        elif choice:
            extra.append(choice)
    for key in TEXT_FILTERS:
        value = _short(raw.get(key), MAX_FILTER_WORDS)
        if value and _said(value, said):
            kept[key] = value
        elif value:
            extra.append(value)
    for key in ("min_price", "max_price", "min_rating"):
        value = raw.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if value > 0 and re.search(rf"\b{value:g}\b", said):
            kept[key] = float(value)
    query = _short(raw.get("query"), MAX_QUERY_WORDS)
    if query:
        extra.insert(0, query)
    return kept, extra


def previous_subject(turn: TurnInput, names: Names) -> dict[str, Any]:
    """The filters of the latest earlier request that had a subject of its own."""
    earlier = [text_of(m) for m in turn.messages if is_person(m)][:-1]
    for text in reversed(earlier[-4:]):
        wanted = read_words(text, names)
        if wanted.subject:
            return dict(wanted.filters)
    # No earlier subject in filters: the latest earlier wine request's words still rank.
    for text in reversed(earlier[-2:]):
        if read_words(text, names).wine_words:
            return {"query": text[:200]}
    return {}


def follow_up_bounds(wanted: Wanted, shown: Sequence[Shown]) -> dict[str, Any]:
    """Price bounds and exclusions that "cheaper", "pricier" and "different" imply."""
    prices = [w.price for w in shown if w.price is not None]
    bounds: dict[str, Any] = {}
    if wanted.cheaper and prices:
        # Below the dearest wine shown, cheapest first: under the cheapest one when the
        # catalog has such wines, else the next best thing rather than nothing.
        bounds["max_price"] = round(max(prices) - 0.01, 2)
        bounds["order"] = "cheapest"
    if wanted.pricier and prices:
        bounds["min_price"] = round(max(prices) + 0.01, 2)
    if (wanted.other or wanted.cheaper or wanted.pricier) and shown:
        bounds["exclude_ids"] = [w.id for w in shown]
    return bounds


def search_arguments(
    raw: dict[str, Any], turn: TurnInput, names: Names, shown: Sequence[Shown]
) -> dict[str, Any]:
    wanted = read_words(turn.request, names)
    said = fold(" ".join(text_of(m) for m in turn.messages if is_person(m))[-2000:])
    kept, extra = keep_supported(raw, said)
    args: dict[str, Any] = {}
    profile = turn.context.get(PROFILE) or {}
    if not wanted.subject and (is_follow_up(wanted) or not kept):
        args.update(previous_subject(turn, names))
        if not args and profile.get("likes"):  # "what should I open tonight?": what they like
            args["query"] = " ".join(profile["likes"][:3])
        if wanted.cheaper and shown and len({w.type for w in shown}) == 1:
            args.setdefault("type", shown[0].type)
    args.update(kept)
    args.update(wanted.filters)  # the person's own words win
    args.update(follow_up_bounds(wanted, shown))
    args.update(exclusions(wanted, args, profile))
    if args.get("type") in args.get("exclude_types", []):
        del args["type"]
    query = " ".join(dict.fromkeys([*([args["query"]] if args.get("query") else []), *extra]))
    if query:
        args["query"] = query[:200]
    if not any(k for k in args if k not in HIDDEN):
        args["query"] = turn.request[:200]  # nothing else to go on: the words themselves
    budget = profile.get("max_price")
    if budget and not any(k in args for k in ("min_price", "max_price")) and not wanted.pricier:
        args["max_price"] = budget  # their usual budget; relaxed like any price if need be
    if not any(k in args for k in ("min_price", "max_price", "order")) and not wanted.pricier:
        args["order"] = "everyday"  # no budget named: not the 650-euro icons first
    args["limit"] = AGENT_LIMIT
    return args


def exclusions(wanted: Wanted, args: dict[str, Any], profile: dict[str, Any]) -> dict[str, Any]:
    """What the search leaves out: what the words turn down, and the profile's hard dislikes
    unless these words ask for them ("no red" people still get red when they ask for red)."""
    asked = {args.get("type"), args.get("country"), *(args.get("countries") or [])}
    types = set(wanted.excluded_types) | set(profile.get("exclude_types", [])) - asked
    countries = set(wanted.excluded_countries) | set(profile.get("exclude_countries", [])) - asked
    ids = [*(args.get("exclude_ids") or []), *profile.get("exclude_ids", [])]
    found: dict[str, Any] = {}
    if types:
        found["exclude_types"] = sorted(types)
    if countries:
        found["exclude_countries"] = sorted(countries)
    if ids:
        found["exclude_ids"] = list(dict.fromkeys(ids))
    return {k: v for k, v in found.items() if v}


_ID = re.compile(r"\b[a-z]{1,6}-\d{1,9}\b")


def names_a_wine(text: str) -> bool:
    """Whether the words name a wine by its id ("Tell me more about … (wine id sm-059)")."""
    return bool(_ID.search(text.lower()))


def wine_ids(raw: dict[str, Any], turn: TurnInput, shown: Sequence[Shown]) -> dict[str, Any]:
    """Ids for get_wine: named in the words ("wine id sm-059"), by position in the previous
    reply ("the first one"), or as the model wrote them; else the wines just shown."""
    wanted = read_words(turn.request)
    named = _ID.findall(turn.request.lower())
    if named:
        return {"ids": named[:5]}
    if wanted.ordinal is not None and shown:
        index = wanted.ordinal if wanted.ordinal < len(shown) else -1
        return {"ids": [shown[index].id]}
    written = raw.get("ids")
    if isinstance(written, list) and written and all(isinstance(i, str) for i in written):
        return {"ids": written[:5]}
    return {"ids": [w.id for w in shown[:3]]} if shown else {"ids": written or []}
