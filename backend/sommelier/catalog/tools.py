"""The sommelier's tools over the catalog: search_wines and get_wine.

A search that matches nothing relaxes instead of failing: unknown values were already dropped
by the argument preparation, and here the wishes go one by one, in a fixed order (free text,
food, sweetness and body, region and grape, country, then price, and the colour only when
nothing else is left) until something matches. What was given up comes back with the result
(`relaxed`, with the values), so the reply can say it ("No wine from Georgia in the catalog;
the closest…"). Exclusions are never relaxed: what a person turned down stays out.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.tools import Tool, ToolError, ToolOutput, ToolRegistry
from sommelier.agent.turn import TurnInput
from sommelier.catalog.label_index import LabelIndex, LabelWine
from sommelier.catalog.reading import SWEET, Names, read
from sommelier.catalog.search import (
    SearchError,
    SearchFilters,
    SearchResult,
    WineSummary,
    get_wines,
    place_of,
    price_of,
    search_wines,
    style_of,
    summarize,
)
from sommelier.catalog.support import stated, supported
from sommelier.catalog.tool_arguments import (
    PRICES,
    Shown,
    exclusions,
    reading_of,
    search_arguments,
    wine_ids,
)
from sommelier.catalog.vocabulary import WINE_TYPES, canonical_grape, fold
from sommelier.db.models import Wine

RELAX_ORDER = (
    ("query",),
    ("food",),
    ("sweetness", "body"),
    ("region", "grape"),
    ("country", "countries"),
    ("min_price", "max_price"),
    ("type", "types"),
)
# A sweet wish in a style with no sweet wines finds the sweet style nearest it ("a sweet
# white" → a dessert wine) before sweetness is given up: the sweetness was the point.
NEAR_STYLE = {"white": "dessert", "red": "fortified"}
NAMES_SECONDS = 300.0  # how long the catalog's names are reused before they are read again
T = TypeVar("T")
PREVIOUS = "previous_wine_ids"  # TurnInput.context key: the wines of the previous reply
# TurnInput.context key: the catalog wines in the person's cellar, the readiest first (the
# chat service reads them, cellar/store.py `kept_wines`); absent for someone with no cellar.
CELLAR = "cellar_wine_ids"
# TurnInput.context key: a turn nothing is kept of (guest mode): no reply a button could name.
UNSTORED = "unstored"
# Where a search looks: the shop's catalog (wines to buy), or the bottles the person owns. Named
# for what the person does with them: the 1.5B model chose "own_bottles" over "shop" for "I need
# to buy a Barolo as a gift" (unseen28, its first run).
SHOP, OWN = "buy_from_shop", "open_own_bottle"
CELLAR_CHOICES = 20  # a cellar search with no wish looks among the readiest this many


class GetWineArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(min_length=1, max_length=5, description="Wine ids from a search.")


def _short_string(limit: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": limit}


# What the planning step may write: the model's reading of the request, in any language it
# speaks: a short query and, where the person said them, a style, country, grape, food and
# budget (all optional: the grammar lets it leave out what was not said). The person's own
# words, read by the word lists, add to it and veto what they contradict (tool_arguments.py).
# The food is the model's own words, not an enum of the catalog's pairings: so constrained,
# the 1.5B model chose "cheese" or "dessert" for hutspot, deruny, halászlé and bún chả, and
# a Tawny Port and a Tokaji came back (unseen25, 24/33 before, 22/33 with the enum).
SEARCH_WISHES: dict[str, Any] = {
    "query": _short_string(40),
    "type": {"enum": list(WINE_TYPES)},
    "country": _short_string(24),
    "grape": _short_string(24),
    "food": _short_string(24),
    "max_price": {"type": "number", "minimum": 0},
}
SEARCH_PLAN = {
    "type": "object",
    "properties": SEARCH_WISHES,
    "required": ["query"],
    "additionalProperties": False,
}
# For someone with a cellar the plan also says where to look, first: the choice the rest of
# the plan follows ("what should I open tonight?" is their own bottles; "a red for steak" the
# shop). Nobody else is offered it: the enum is what this turn allows.
CELLAR_PLAN = {
    **SEARCH_PLAN,
    "properties": {"source": {"enum": [SHOP, OWN]}, **SEARCH_WISHES},
    "required": ["source", "query"],
}


def search_plan(turn: TurnInput) -> dict[str, Any] | None:
    return CELLAR_PLAN if turn.context.get(CELLAR) else None


GET_WINE_PLAN = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": _short_string(20), "maxItems": 3}},
    "required": ["ids"],
    "additionalProperties": False,
}


class WineCache:
    """Catalog rows the tools loaded, by id, for the rest of the turn and the next one (the
    wines just shown, the cards): what a search read is not read again. Bounded, and short-
    lived so that an import is seen within NAMES_SECONDS."""

    def __init__(self, size: int = 2000) -> None:
        self.size = size
        self._rows: OrderedDict[str, tuple[float, Wine]] = OrderedDict()

    def add(self, wines: Sequence[Wine]) -> None:
        now = time.monotonic()
        for wine in wines:
            self._rows[wine.external_id] = (now, wine)
            self._rows.move_to_end(wine.external_id)
        while len(self._rows) > self.size:
            self._rows.popitem(last=False)

    def get(self, wine_id: str) -> Wine | None:
        found = self._rows.get(wine_id)
        if found is None or time.monotonic() - found[0] > NAMES_SECONDS:
            return None
        return found[1]

    async def wines(self, sessions: async_sessionmaker[AsyncSession], ids: list[str]) -> list[Wine]:
        """Wines by id, in the order asked, from the cache or (for the rest) the database."""
        missing = [i for i in dict.fromkeys(ids) if self.get(i) is None]
        if missing:
            async with sessions() as session:
                self.add(await get_wines(session, missing))
        return [wine for i in ids if (wine := self.get(i)) is not None]


class Refreshed(Generic[T]):
    """A value read again once older than `seconds`; one read at a time, however many ask at
    once (a bot's restart)."""

    def __init__(self, read: Callable[[], Awaitable[T]], seconds: float) -> None:
        self.read, self.seconds = read, seconds
        self._value: tuple[float, T] | None = None
        self._reading = asyncio.Lock()

    def _stale(self) -> bool:
        return self._value is None or time.monotonic() - self._value[0] > self.seconds

    async def get(self) -> T:
        if self._stale():
            async with self._reading:
                if self._stale():  # not read meanwhile by a caller that held the lock
                    self._value = (time.monotonic(), await self.read())
        assert self._value is not None
        return self._value[1]


class CatalogTools:
    """The catalog's tools, with the catalog's names cached for reading people's words."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        cache: WineCache | None = None,
        *,
        count: bool = False,
    ) -> None:
        self.sessions = sessions
        self.cache = cache or WineCache()
        # The model reads no counts; other clients (MCP) get how many match.
        self.count = count
        # Both read again after a while, so that an import is seen.
        self._names = Refreshed(self._read_names, NAMES_SECONDS)
        self._index = Refreshed(self._read_label_index, NAMES_SECONDS)

    async def names(self) -> Names:
        return await self._names.get()

    async def label_index(self) -> LabelIndex:
        """The catalog's wines by the words of their producer and name (catalog/label_index.py): a
        label's text, or a wine a person names, is matched against it."""
        return await self._index.get()

    async def _read_label_index(self) -> LabelIndex:
        async with self.sessions() as session:
            shown = (Wine.external_id, Wine.name, Wine.producer, Wine.region, Wine.vintage)
            rows = [LabelWine(*row) for row in await session.execute(select(*shown))]
        return await asyncio.to_thread(LabelIndex, rows)  # CPU-bound on a large catalog

    async def _read_names(self) -> Names:
        async with self.sessions() as session:
            countries = await session.scalars(select(Wine.country).distinct())
            regions = await session.scalars(select(Wine.region).distinct())
            grape_keys = await session.scalars(select(Wine.grape_keys).distinct())
            places = await session.execute(select(Wine.region, Wine.country).distinct())
            currency = await session.scalar(
                select(Wine.currency)
                .where(Wine.currency.is_not(None))
                .group_by(Wine.currency)
                .order_by(func.count().desc())
                .limit(1)
            )
            return Names(
                countries=frozenset(fold(c) for c in countries if c),
                regions=frozenset(fold(r) for r in regions if r),
                grapes=frozenset(g for keys in grape_keys for g in keys.split("|") if g),
                currency=currency or "EUR",
                places=frozenset((fold(r), fold(c)) for r, c in places if r and c),
            )

    async def shown(self, turn: TurnInput) -> list[Shown]:
        ids = list(turn.context.get(PREVIOUS) or [])
        if not ids:
            return []
        wines = await self.cache.wines(self.sessions, ids)
        return [Shown(w.external_id, w.type, w.price) for w in wines]

    async def wines(self, ids: list[str]) -> list[Wine]:
        return await self.cache.wines(self.sessions, ids)

    async def known_wines(self, ids: list[str]) -> dict[str, str]:
        """Id → name of the ids the catalog has (grounding for other servers' results)."""
        return {w.external_id: w.name for w in await self.wines(ids)}

    async def prepare_search(self, raw: dict[str, Any], turn: TurnInput) -> dict[str, Any]:
        own = raw.pop("source", SHOP) == OWN
        names = await self.names()
        args = search_arguments(raw, turn, names, await self.shown(turn))
        held = list(turn.context.get(CELLAR) or [])
        return in_cellar(args, held, reading_of(turn, names).filters) if own and held else args

    async def prepare_get_wine(self, raw: dict[str, Any], turn: TurnInput) -> dict[str, Any]:
        return wine_ids(raw, turn, await self.shown(turn))

    async def search_words(self, text: str, limit: int = 5) -> list[Wine]:
        """Wines for a person's own words, with no model: what they ask for and turn down,
        read in any covered language, relaxed until something matches ("red under 20 for
        pizza" in inline mode; the words on a label the catalog does not have)."""
        reading = read(text, await self.names())
        wanted = {k: v for k, v in reading.filters.items() if k in SearchFilters.model_fields}
        filters = SearchFilters(**wanted, **exclusions(reading, wanted, {}), limit=limit)
        if not filters.has_criteria():
            filters = filters.model_copy(update={"order": "everyday"})
        async with self.sessions() as session:
            result, _, _ = await relaxed_search(session, filters, count=False)
        self.cache.add(result.rows)
        return result.rows

    async def search(self, filters: SearchFilters) -> ToolOutput:
        async with self.sessions() as session:
            try:
                result, relaxed, final = await relaxed_search(session, filters, count=self.count)
            except SearchError as exc:
                raise ToolError(str(exc)) from None
        self.cache.add(result.rows)
        if filters.only_ids:
            result = readiest_first(result, filters.only_ids)
        asked = stated(filters, relaxed)
        text = search_text(result, relaxed, picks=not final.has_criteria())
        return ToolOutput(
            _search_data(result, relaxed),
            frozenset(w.id for w in result.wines),
            labels={w.id: w.name for w in result.wines},
            text=f"{OWN_HEAD}\n{text}" if filters.only_ids else text,
            facts={w.external_id: facts_of(w, supported(w, asked)) for w in result.rows},
            notes=_notes(result, relaxed, filters),
        )

    async def get_wine(self, args: GetWineArgs) -> ToolOutput:
        wines = await self.wines(args.ids)
        details = [_details(w) for w in wines]
        data: dict[str, Any] = {"wines": details}
        missing = [i for i in args.ids if i not in {w.external_id for w in wines}]
        if missing:
            data["not_found"] = missing
        lines = [_details_line(w) for w in wines]
        lines += [f"- {wine_id}: not in the catalog" for wine_id in missing]
        return ToolOutput(
            data,
            frozenset(w.external_id for w in wines),
            labels={w.external_id: w.name for w in wines},
            text="\n".join(lines),
            facts={w.external_id: facts_of(w) for w in wines},
        )

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()
        registry.add(
            Tool(
                "search_wines",
                "search the wine catalog, only when the person asks for wine to drink or buy "
                "(not for thanks, greetings, other subjects, or questions about wine in general)",
                SearchFilters,
                self.search,
                prepare=self.prepare_search,
                plan_schema=SEARCH_PLAN,
                plan_for=search_plan,
            )
        )
        registry.add(
            Tool(
                "get_wine",
                "details of wines already shown, by id",
                GetWineArgs,
                self.get_wine,
                prepare=self.prepare_get_wine,
                plan_schema=GET_WINE_PLAN,
            )
        )
        return registry


def facts_of(wine: Wine, reasons: Sequence[str] = ()) -> dict[str, Any]:
    """What a reply's text may state about a wine, from its catalog row (chat/prose.py), and
    the reasons for it a search supports (catalog/support.py), which the answer may choose."""
    return {
        "reasons": list(reasons),
        "name": wine.name,
        "producer": wine.producer,
        "grapes": list(wine.grapes),
        "region": wine.region,
        "country": wine.country,
        "type": wine.type,
        "sweetness": wine.sweetness,
        "price": wine.price,
        "currency": wine.currency,
        "vintage": wine.vintage,
        "rating": round(wine.rating_avg, 2) if wine.rating_avg is not None else None,
        "description": wine.description,
    }


def _search_data(result: SearchResult, relaxed: Mapping[str, Any]) -> dict[str, Any]:
    data = result.model_dump(exclude_none=True)
    if relaxed:
        data["relaxed"] = dict(relaxed)
        data["note"] = f"nothing matched every wish; these match without {_wishes(relaxed)}: say so"
    elif not result.wines:
        data["note"] = "nothing in the catalog matches; say so and suggest something else"
    return data


async def relaxed_search(
    session: AsyncSession, filters: SearchFilters, *, count: bool = True
) -> tuple[SearchResult, dict[str, Any], SearchFilters]:
    """The search, with wishes dropped in RELAX_ORDER while nothing matches: the closest wines
    beat "nothing found". The model's guesses (`guessed`) go first, one at a time in
    GUESS_ORDER, and are not reported. Returns what the person's own wishes gave up, with its
    values. A request with nothing left to match ("recommend a bottle for tonight" matched no
    words) ends with the catalog's well-rated everyday wines; only exclusions stay to the end."""
    relaxed: dict[str, Any] = {}
    result, filters = await _guesses_given_up(session, filters, count)
    filters = filters.model_copy(update={"guessed": []})
    for names in RELAX_ORDER:
        if result.wines:
            break
        if "sweetness" in names and (near := _near_style(filters)) is not None:
            found = await search_wines(session, near, count=count, explain=False)
            if found.wines:
                relaxed["type"] = filters.type
                return found, relaxed, near
        present = {n: getattr(filters, n) for n in names if getattr(filters, n) not in (None, [])}
        if not present:
            continue
        colour = await _grape_colour(session, filters) if "grape" in present else None
        filters = _without(filters, list(present))
        if colour is not None:
            # A grape given up keeps its colour: the closest to a Pinot Gris is a white.
            filters = filters.model_copy(update={"type": colour})
        relaxed.update(present)
        result = await search_wines(session, filters, count=count, explain=False)
    return result, relaxed, filters


async def _guesses_given_up(
    session: AsyncSession, filters: SearchFilters, count: bool
) -> tuple[SearchResult, SearchFilters]:
    """The model's guesses given up one at a time, the least reliable first: given up all at
    once, a dish the model read right ("cheese" of チーズ) went with the sparkling wine it made
    up beside it. When that finds nothing, the same again without the query: a food the model
    wrote beside a dish's name ("mushrooms" beside "pierogi") was given up before the name,
    which matches no wine. That second time only the surest guess stays: with the dessert the
    model also made up for "tartiflette" beside its "cheese", a Tawny Port and a Tokaji came."""
    starts = [filters]
    if filters.guessed and filters.query:
        *unsure, surest = sorted(filters.guessed, key=_guess_rank)
        start = _without(filters.model_copy(update={"query": None}), unsure)
        starts.append(start.model_copy(update={"guessed": [surest]}))
    for start in starts:
        filters = start
        result = await search_wines(session, filters, count=count, explain=False)
        for name in sorted(filters.guessed, key=_guess_rank):
            if result.wines:
                break
            filters = _without(filters, [name])
            result = await search_wines(session, filters, count=count, explain=False)
        if result.wines:
            return result, filters
    return result, _without(starts[0], starts[0].guessed)


# The model's guesses given up first to last: a dish it read from the message is its surest.
GUESS_ORDER = (
    "grape", "region", "country", "countries", "sweetness", "body", "type", "types", "food",
)  # fmt: skip


def _guess_rank(name: str) -> int:
    return GUESS_ORDER.index(name) if name in GUESS_ORDER else -1


async def _grape_colour(session: AsyncSession, filters: SearchFilters) -> str | None:
    """The style most of the catalog's wines of the asked grape are, when no style was asked."""
    if filters.type or filters.types or not filters.grape:
        return None
    grape = f"|{canonical_grape(filters.grape)}"
    found = await session.scalar(
        select(Wine.type)
        .where(Wine.grape_keys.contains(grape, autoescape=True))
        .group_by(Wine.type)
        .order_by(func.count().desc())
        .limit(1)
    )
    return str(found) if found else None


def _without(filters: SearchFilters, names: Sequence[str]) -> SearchFilters:
    """`filters` less the named wishes (the catalog's everyday wines when none is left)."""
    empty: dict[str, Any] = {
        n: [] if isinstance(getattr(filters, n), list) else None for n in names
    }
    filters = filters.model_copy(update=empty)
    if not filters.has_criteria():
        filters = filters.model_copy(update={"order": "everyday"})
    return filters


def _near_style(filters: SearchFilters) -> SearchFilters | None:
    """The search in the sweet style nearest the asked one, or None when there is none."""
    near = NEAR_STYLE.get(filters.type or "")
    if near is None or filters.sweetness not in SWEET:
        return None
    return filters.model_copy(update={"type": near, "sweetness": None})


def _given_up(relaxed: Mapping[str, Any], soft: tuple[str, ...] = ("query",)) -> dict[str, Any]:
    """The wishes a search gave up, less `soft` ones: free text only ranked; a dish or a body
    missing from the catalog's pairing and style labels is no news for the person."""
    return {k: v for k, v in relaxed.items() if k not in soft}


# The wishes a notice names: food, body and free text are not news (the catalog's pairing and
# style labels are incomplete, and a white for cod is no surprise).
HARD = ("type", "types", "sweetness", "grape", "region", "country", "countries", "min_price",
        "max_price")  # fmt: skip


def _notes(
    result: SearchResult, relaxed: Mapping[str, Any], asked: SearchFilters
) -> dict[str, Any]:
    """For the domain: what the person asked for that the search held (`wanted`, their own
    wishes, not the model's guesses), what of it was given up (`relaxed`), and the rules that
    shaped the arguments (`fired`)."""
    fired = {"fired": list(asked.fired)} if asked.fired else {}
    given_up = {k: v for k, v in relaxed.items() if k in HARD}
    if not given_up or not result.wines:
        return fired
    wanted = {
        k: v for k in HARD if k not in asked.guessed and (v := getattr(asked, k)) not in (None, [])
    }
    # After "cheaper" or "other", the wines just shown were left out of the search.
    return fired | {
        "wanted": wanted,
        "relaxed": given_up,
        "others": bool(asked.exclude_ids),
        "cellar": bool(asked.only_ids),
    }


OWN_HEAD = "The person's own bottles, from their cellar (readiest to drink first):"


def in_cellar(args: dict[str, Any], held: list[str], said: Mapping[str, Any]) -> dict[str, Any]:
    """A search among the person's own bottles: no shop's budget or everyday order (they own
    them) unless their words name a price; with no wish at all, the readiest CELLAR_CHOICES."""
    kept = {k: v for k, v in args.items() if k != "order" and (k not in PRICES or k in said)}
    wishes = SearchFilters(**{k: v for k, v in kept.items() if k != "limit"})
    kept["only_ids"] = held if wishes.has_criteria() else held[:CELLAR_CHOICES]
    return kept


def readiest_first(result: SearchResult, held: Sequence[str]) -> SearchResult:
    """The cellar's matches in its order (the readiest first, cellar/store.py)."""
    rank = {wine_id: i for i, wine_id in enumerate(held)}
    ordered = result.model_copy(
        update={"wines": sorted(result.wines, key=lambda w: rank.get(w.id, len(rank)))}
    )
    ordered._rows = sorted(result.rows, key=lambda w: rank.get(w.external_id, len(rank)))
    return ordered


def _wishes(relaxed: Mapping[str, Any]) -> str:
    """The relaxed wishes as the model reads them: "country Georgia, max_price 5"."""
    return ", ".join(f"{key} {value}" for key, value in relaxed.items())


# The heads of a search result's lines: a small model sometimes copies them, in English, into
# its reply (chat/reply.py cuts them out).
MATCH_HEAD = "Wines from the catalog that match"
NOTHING_HEAD, CLOSEST_HEAD = "Nothing matches", "these are the closest"
PICKS_HEAD = "Well-rated wines at everyday prices"


def search_text(result: SearchResult, relaxed: Mapping[str, Any], picks: bool = False) -> str:
    """The result as a small model reads it best: one plain sentence per wine, no JSON keys and
    no counts (a small model repeats those: "here are the best 4"). Free text that matched
    nothing is not a wish given up: it only ranked."""
    relaxed = _given_up(relaxed)
    if not result.wines:
        return "No wine in the catalog matches. Say so, and suggest another style or price."
    head = MATCH_HEAD
    if relaxed:
        head = f"{NOTHING_HEAD} {_wishes(relaxed)}; {CLOSEST_HEAD} (say so)"
    elif picks:
        head = f"{PICKS_HEAD} (offer them as a good place to start)"
    return "\n".join([f"{head}:", *(_line(wine) for wine in result.wines)])


def _line(wine: WineSummary) -> str:
    made = f" by {wine.producer}" if wine.producer else ""
    place = f" from {wine.region}" if wine.region else ""
    grapes = f", {' and '.join(wine.grapes)}" if wine.grapes else ""
    price = f", {wine.price}" if wine.price else ""
    rating = f", rated {wine.rating}" if wine.rating is not None else ""
    about = f". {wine.description}" if wine.description else "."
    return f"- {wine.id}: {wine.name}{made}{place}; {wine.style}{grapes}{price}{rating}{about}"


def _details_line(wine: Wine) -> str:
    line = _line(summarize(wine))
    extra = [
        f"{wine.abv:g}% alcohol" if wine.abv else None,
        f"vintage {wine.vintage}" if wine.vintage else None,
        f"{wine.acidity} acidity" if wine.acidity else None,
        f"with {', '.join(wine.food_pairings[:4]).lower()}" if wine.food_pairings else None,
    ]
    return f"{line} {'; '.join(e for e in extra if e).capitalize()}."


def _details(wine: Wine) -> dict[str, Any]:
    return {
        "id": wine.external_id,
        "name": wine.name,
        "producer": wine.producer,
        "region": place_of(wine),
        "grapes": wine.grapes,
        "style": style_of(wine),
        "acidity": wine.acidity,
        "abv": wine.abv,
        "vintage": wine.vintage,
        "price": price_of(wine),
        "rating": round(wine.rating_avg, 2) if wine.rating_avg is not None else None,
        "ratings": wine.rating_count,
        "food_pairings": wine.food_pairings,
        "description": wine.description,
    }


def catalog_tools(sessions: async_sessionmaker[AsyncSession]) -> ToolRegistry:
    return CatalogTools(sessions).registry()
