"""A cellar's rows: whose it is, its bottles, what happened to them, and each bottle's window."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process, utils
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.catalog.vocabulary import fold
from sommelier.cellar.files import CellarRow
from sommelier.cellar.windows import Readiness, Style, Window, window, years_after_vintage
from sommelier.db.models import Cellar, CellarBottle, CellarEvent, Wine, utcnow
from sommelier.db.repositories import Person, get_or_create_user

# A file's wine is the catalog's when its producer and name read this close to one row's
# (rapidfuzz's token_sort_ratio, 0-100); below, it stays the person's own row.
SURE_MATCH = 88


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose cellar: a person's (users.id), or a group chat's that its members share."""

    user_id: int | None = None
    chat_id: int | None = None


async def owner_of(session: AsyncSession, person: Person, group: int | None = None) -> Owner:
    """Whose cellar a person means: the group chat's they write in (`group`), else their own."""
    if group is not None:
        return Owner(chat_id=group)
    user = await get_or_create_user(session, person)
    await session.flush()
    return Owner(user_id=user.id)


def _owned(owner: Owner) -> Any:
    if owner.chat_id is not None:
        return Cellar.chat_id == owner.chat_id
    return Cellar.user_id == owner.user_id


async def bottles_held(session: AsyncSession, owner: Owner) -> int:
    """How many bottles the owner's cellar holds (0 when there is none)."""
    query = (
        select(func.coalesce(func.sum(CellarBottle.quantity), 0))
        .join(Cellar, Cellar.id == CellarBottle.cellar_id)
        .where(_owned(owner))
    )
    return int(await session.scalar(query) or 0)


async def forget(session: AsyncSession, owner: Owner) -> int:
    """Deletes the owner's cellar, its bottles and their history; how many bottles it held."""
    held_before = await bottles_held(session, owner)
    await session.execute(delete(Cellar).where(_owned(owner)))
    return held_before


async def cellar_of(session: AsyncSession, owner: Owner) -> Cellar:
    """The owner's cellar, made on first use."""
    group = owner.chat_id is not None
    where = _owned(owner)
    found = await session.scalar(select(Cellar).where(where))
    if found is not None:
        return found
    cellar = Cellar(user_id=None if group else owner.user_id, chat_id=owner.chat_id)
    try:
        async with session.begin_nested():
            session.add(cellar)
    except IntegrityError:  # made meanwhile by another turn
        found = await session.scalar(select(Cellar).where(where))
        assert found is not None
        return found
    return cellar


@dataclass(frozen=True, slots=True)
class Added:
    bottles: int
    rows: int
    matched: int  # rows found in the catalog
    touched: tuple[CellarBottle, ...] = ()  # the bottle row each file row went to, in order


async def add_rows(
    session: AsyncSession,
    cellar: Cellar,
    rows: Sequence[CellarRow],
    user_id: int | None,
    source: str,
    *,
    match_names: bool = True,
) -> Added:
    """Adds the rows' bottles (to a row of the same wine, vintage and place when there is one),
    each with an "added" event; the caller commits, so a file goes in whole or not at all. A row
    without the catalog's id is matched by its name, unless `match_names` is off (a wine the
    person chose to keep as they named it). The whole catalog is read only to match names."""
    named = match_names and any(not row.wine_id for row in rows)
    catalog = await _catalog(session, None if named else {r.wine_id for r in rows if r.wine_id})
    matcher = Matcher(catalog) if named else None
    kept = await session.scalars(select(CellarBottle).where(CellarBottle.cellar_id == cellar.id))
    bottles = {_key(b): b for b in kept}
    matched = 0
    keys = []
    for row in rows:
        wine = catalog.get(row.wine_id or "") or (matcher(row) if matcher else None)
        matched += wine is not None
        bottle = _new_bottle(cellar, row, wine, source)
        key = _key(bottle)
        keys.append(key)
        if key in bottles:
            bottles[key].quantity += row.quantity
            bottles[key].updated_at = utcnow()
        else:
            bottles[key] = bottle
            session.add(bottle)
    await session.flush()  # the new rows' ids, for their events
    session.add_all(
        CellarEvent(bottle_id=bottles[k].id, user_id=user_id, kind="added", quantity=r.quantity)
        for k, r in zip(keys, rows, strict=True)
    )
    touched = tuple(bottles[k] for k in keys)
    return Added(sum(r.quantity for r in rows), len(rows), matched, touched)


def _key(bottle: CellarBottle) -> tuple[str | None, ...]:
    """Bottles of one wine (the catalog's id, else its name and producer), vintage and place."""
    b = bottle
    wine = (b.wine_id, None, None) if b.wine_id else (None, b.name, b.producer)
    return (*wine, b.vintage, b.location)


async def _catalog(session: AsyncSession, ids: set[str] | None = None) -> dict[str, Wine]:
    """The catalog's rows by id: all of them, or those of `ids`."""
    query = select(Wine) if ids is None else select(Wine).where(Wine.external_id.in_(ids))
    return {w.external_id: w for w in (await session.scalars(query)).all()}


def label(producer: str | None, name: str) -> str:
    """ "Producer Name", unless the name already says who made it: it starts with the producer
    (CellarTracker's "Louis Jadot Bourgogne Pinot Noir") or has its first word ("Catena
    Malbec" by Catena Zapata)."""
    if not producer:
        return name
    first = fold(producer).split()[0] if producer.split() else ""
    if fold(name).startswith(fold(producer)) or first in fold(name).split():
        return name
    return f"{producer} {name}"


class Matcher:
    """The catalog's wine a row names, by its name alone and with its producer: catalogs and
    exports differ on whether the producer is part of the name ("Catena Malbec" by Catena
    Zapata). A name shorter than the wine's ("Catena") is no match. The catalog's names are
    prepared once, and a name asked again is answered from memory (a file lists a wine once
    per vintage and place)."""

    def __init__(self, catalog: dict[str, Wine]) -> None:
        self.catalog = catalog
        self.ids = [wine_id for wine_id in catalog for _ in (0, 1)]
        names = [n for w in catalog.values() for n in (w.name, label(w.producer, w.name))]
        self.names = [utils.default_process(n) for n in names]
        self.seen: dict[str, Wine | None] = {}

    def __call__(self, row: CellarRow) -> Wine | None:
        asked = utils.default_process(label(row.producer, row.name))
        if asked not in self.seen:
            found = process.extractOne(
                asked, self.names, scorer=fuzz.token_sort_ratio, score_cutoff=SURE_MATCH
            ) if self.names else None  # fmt: skip
            self.seen[asked] = self.catalog[self.ids[found[2]]] if found else None
        return self.seen[asked]


def _new_bottle(cellar: Cellar, row: CellarRow, wine: Wine | None, source: str) -> CellarBottle:
    """The catalog's facts for a wine it has; the file's for one it lacks."""
    return CellarBottle(
        cellar_id=cellar.id,
        wine_id=wine.external_id if wine else None,
        name=wine.name if wine else row.name,
        producer=wine.producer if wine else row.producer,
        country=wine.country if wine else row.country,
        region=wine.region if wine else row.region,
        type=wine.type if wine else row.type,
        grapes=list(wine.grapes) if wine else row.grapes,
        vintage=row.vintage,
        quantity=row.quantity,
        location=row.location,
        price_paid=row.price_paid,
        currency=row.currency,
        drink_from=row.drink_from,
        drink_until=row.drink_until,
        source=source,
    )


@dataclass(frozen=True, slots=True)
class Held:
    """A bottle row still in the cellar, with its window and readiness this year."""

    bottle: CellarBottle
    window: Window
    readiness: Readiness


async def held(session: AsyncSession, cellar: Cellar, today: datetime | None = None) -> list[Held]:
    """The bottles in the cellar, at their peak first, then ready, too young and past it."""
    year = (today or utcnow()).year
    bottles = (
        await session.scalars(
            select(CellarBottle)
            .where(CellarBottle.cellar_id == cellar.id, CellarBottle.quantity > 0)
            .order_by(CellarBottle.id)
        )
    ).all()
    ids = {b.wine_id for b in bottles if b.wine_id}
    catalog = await _catalog(session, ids) if ids else {}
    found = []
    for bottle in bottles:
        drink = bottle_window(bottle, catalog.get(bottle.wine_id or ""))
        found.append(Held(bottle, drink, drink.readiness(year)))
    order = list(READINESS_ORDER)
    return sorted(found, key=lambda h: order.index(h.readiness))


READINESS_ORDER = (Readiness.peak, Readiness.ready, Readiness.too_young, Readiness.past)
OWN_SHOWN = 3


async def own_bottles(
    session: AsyncSession, owner: Owner, wishes: Mapping[str, Any], today: datetime | None = None
) -> list[Held]:
    """The owner's bottles of wines the catalog lacks (no card can show them) that meet the
    wishes their rows can answer (type, country, grape; a row that does not say is no match),
    readiest first, at most OWN_SHOWN."""
    year = (today or utcnow()).year
    owned = select(Cellar.id).where(_owned(owner)).scalar_subquery()
    query = select(CellarBottle).where(
        CellarBottle.cellar_id == owned, CellarBottle.quantity > 0, CellarBottle.wine_id.is_(None)
    )
    if wishes.get("type"):
        query = query.where(CellarBottle.type == wishes["type"])
    if wishes.get("country"):
        query = query.where(func.lower(CellarBottle.country) == str(wishes["country"]).lower())
    grape = fold(str(wishes.get("grape") or ""))
    found = []
    for bottle in (await session.scalars(query.order_by(CellarBottle.id))).all():
        if grape and grape not in {fold(g) for g in bottle.grapes or []}:
            continue
        drink = bottle_window(bottle, None)
        found.append(Held(bottle, drink, drink.readiness(year)))
    found.sort(key=lambda h: READINESS_ORDER.index(h.readiness))
    return found[:OWN_SHOWN]


def bottle_window(bottle: CellarBottle, wine: Wine | None) -> Window:
    """The window from the catalog's row where the wine is in the catalog, else the bottle's own
    style; a non-vintage wine is ready from the year it was added."""
    # The catalog's price where it has the wine; else what was paid, in whatever currency (the
    # exports people bring are in euros, dollars or pounds, near enough for "everyday").
    price = wine.price if wine else bottle.price_paid
    style = Style(
        type=(wine.type if wine else bottle.type),
        body=wine.body if wine else None,
        sweetness=wine.sweetness if wine else None,
        grapes=tuple(wine.grapes if wine else bottle.grapes or ()),
        price=price,
    )
    # A bottle with no vintage given is of the catalog wine's; "NV" is no year.
    year = bottle.vintage or (wine.vintage if wine else None)
    return dated(style, year, bottle.added_at.year, bottle.drink_from, bottle.drink_until)


@lru_cache(maxsize=65_536)  # a cellar's owner asks every turn; its bottles change seldom
def dated(
    style: Style, year: str | None, added: int, drink_from: int | None, drink_until: int | None
) -> Window:
    """The window of a bottle of `year` (a vintage, "NV" or none) added in `added`: a
    non-vintage wine is sold ready to drink, so its window opens the year it was bought."""
    bought = added - years_after_vintage(style)[0]
    vintage = int(year) if year and year.isdigit() else bought
    return window(style, vintage, drink_from, drink_until)


@dataclass(frozen=True, slots=True)
class Kept:
    """A catalog wine in the cellar, for the agent's cellar search and the cards: how many
    bottles, where they lie, and how ready the readiest of them is."""

    quantity: int
    places: tuple[str, ...]
    readiness: Readiness


BOTTLE_COLUMNS = (
    *(CellarBottle.wine_id, CellarBottle.quantity, CellarBottle.location, CellarBottle.vintage),
    *(CellarBottle.added_at, CellarBottle.drink_from, CellarBottle.drink_until),
)
STYLE_COLUMNS = (Wine.external_id, Wine.type, Wine.body, Wine.sweetness, Wine.grapes, Wine.price)


async def _styles(session: AsyncSession, ids: set[str]) -> dict[str, tuple[Style, str | None]]:
    """Each catalog wine's style and vintage, by its id."""
    query = select(*STYLE_COLUMNS, Wine.vintage).where(Wine.external_id.in_(ids))
    return {
        r.external_id: (
            Style(r.type, r.body, r.sweetness, tuple(r.grapes or ()), r.price),
            r.vintage,
        )
        for r in (await session.execute(query)).all()
    }


# Every turn of a cellar's owner reads what it holds (below); of a cellar of 10,000 bottle rows
# that took 50 ms, mostly Python over 5,000 rows (bench/cellar_bench.py). What it holds is kept
# per process, by cellar and year, and read again when the cellar's rows changed (their count,
# bottles and latest change, one aggregate query) or after KEPT_SECONDS (a catalog import).
_KEPT: OrderedDict[tuple[int, ...], tuple[tuple[Any, ...], float, dict[str, Kept]]] = OrderedDict()
KEPT_CELLARS = 256
KEPT_SECONDS = 300.0


async def kept_wines(
    session: AsyncSession, owner: Owner, today: datetime | None = None
) -> dict[str, Kept]:
    """The owner's bottles that are catalog wines, by catalog id, readiest first (a bottle of
    the person's own, not in the catalog, has no card to show and is left out)."""
    year = (today or utcnow()).year
    owned = select(Cellar.id).where(_owned(owner)).scalar_subquery()
    b = CellarBottle
    changed = select(
        func.max(b.cellar_id), func.count(), func.coalesce(func.sum(b.quantity), 0),
        func.max(b.updated_at), func.max(b.id),
    ).where(b.cellar_id == owned)  # fmt: skip
    state: tuple[Any, ...] = tuple((await session.execute(changed)).one())
    if not state[1]:
        return {}
    # (the database too: a process may hold several, as the tests and the evaluation do)
    key, now = (id(session.bind), int(state[0]), year), time.monotonic()
    cached = _KEPT.get(key)
    if cached is not None and cached[0] == state and now - cached[1] < KEPT_SECONDS:
        _KEPT.move_to_end(key)
        return dict(cached[2])
    kept = await _kept(session, owned, year)
    _KEPT[key] = (state, now, kept)
    while len(_KEPT) > KEPT_CELLARS:
        _KEPT.popitem(last=False)
    return dict(kept)


async def _kept(session: AsyncSession, owned: Any, year: int) -> dict[str, Kept]:
    """What the cellar holds, read: plain columns, each wine's style once."""
    bottles = (
        await session.execute(
            select(*BOTTLE_COLUMNS)
            .where(CellarBottle.cellar_id == owned, CellarBottle.quantity > 0)
            .where(CellarBottle.wine_id.is_not(None))
            .order_by(CellarBottle.id)
        )
    ).all()
    ids = {b.wine_id for b in bottles}
    styles = await _styles(session, ids) if ids else {}
    ranked = []
    for b in bottles:
        if b.wine_id not in styles:
            continue  # a wine the catalog has dropped since
        style, vintage = styles[b.wine_id]
        drink = dated(style, b.vintage or vintage, b.added_at.year, b.drink_from, b.drink_until)
        ranked.append((READINESS_ORDER.index(drink.readiness(year)), b))
    kept: dict[str, Kept] = {}
    for rank, b in sorted(ranked, key=lambda f: f[0]):
        before = kept.get(b.wine_id)
        places = (*before.places, b.location) if before else (b.location,)
        kept[b.wine_id] = Kept(
            quantity=b.quantity + (before.quantity if before else 0),
            places=tuple(dict.fromkeys(p for p in places if p)),
            readiness=before.readiness if before else READINESS_ORDER[rank],  # readiest first
        )
    return kept
