"""Drink windows: when a bottle is too young, ready, at its peak or past it. The years come
from a curated, sourced table (data/drink_windows.toml) by the wine's style, grape and price,
or from the person's own window on the bottle, which wins."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from sommelier.catalog.vocabulary import style_key

# Below this price (the catalog's currency) a wine is made to drink young, whatever its grape.
EVERYDAY_PRICE = 15.0
GRAPE_KINDS = ("red", "white")  # the still wines whose grape's row tells their window


class Readiness(StrEnum):
    too_young = "too_young"
    ready = "ready"
    peak = "peak"
    past = "past"


@dataclass(frozen=True, slots=True)
class Style:
    """What the table reads of a wine: its catalog row's, or the person's own row's."""

    type: str | None
    body: str | None = None
    sweetness: str | None = None
    grapes: Sequence[str] = ()
    price: float | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """Calendar years: ready from `ready`, at its peak from `peak_from` to `peak_until`, past it
    after. `own`: the person's window, not the table's."""

    ready: int
    peak_from: int
    peak_until: int
    own: bool = False

    def readiness(self, year: int) -> Readiness:
        if year < self.ready:
            return Readiness.too_young
        if year < self.peak_from:
            return Readiness.ready
        if year <= self.peak_until:
            return Readiness.peak
        return Readiness.past


@cache
def _table() -> dict[str, Any]:
    path = resources.files("sommelier.cellar") / "data" / "drink_windows.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))


def years_after_vintage(style: Style) -> tuple[int, int, int]:
    """(ready, peak_from, peak_until) in years after the vintage, from the table."""
    everyday = style.price is not None and style.price < EVERYDAY_PRICE
    return _years(style.type or "red", style.body, style.sweetness, tuple(style.grapes), everyday)


@cache  # a cellar of 10,000 bottles holds a few hundred styles
def _years(
    kind: str, body: str | None, sweetness: str | None, grapes: tuple[str, ...], everyday: bool
) -> tuple[int, int, int]:
    table = _table()
    style = table["style"].get(style_key(kind, body, sweetness), table["style"]["red medium"])
    if everyday and kind in table["everyday"]:
        row = table["everyday"][kind]
    elif kind in GRAPE_KINDS:
        row = next(
            (table["grape"][g.lower()] for g in grapes if g.lower() in table["grape"]), style
        )
    else:  # a rosé of Syrah or a Champagne of Pinot Noir ages as its style, not as the grape's red
        row = style
    return row[0], row[1], row[2]


def window(
    style: Style,
    vintage: int,
    drink_from: int | None = None,
    drink_until: int | None = None,
) -> Window:
    """The bottle's window. `vintage`: its year, or the year it was bought for a non-vintage
    wine. The person's own years win: with both, its middle third is the peak."""
    if drink_from and drink_until and drink_until >= drink_from:
        third = (drink_until - drink_from) // 3
        return Window(drink_from, drink_from + third, drink_until - third, own=True)
    ready, peak_from, peak_until = years_after_vintage(style)
    table = Window(vintage + ready, vintage + peak_from, vintage + peak_until)
    if drink_from:  # only a start: the table's span from there
        shift = drink_from - table.ready
        return Window(drink_from, table.peak_from + shift, table.peak_until + shift, own=True)
    if drink_until:  # only an end: the table's start, the peak up to it
        return Window(table.ready, min(table.peak_from, drink_until), drink_until, own=True)
    return table
