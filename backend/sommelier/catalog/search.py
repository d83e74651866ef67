"""The one catalog search, used by the agent's tools and by `sommelier catalog search`.

Filters narrow the set; free text ranks it by full-text relevance (SQLite FTS5 bm25,
PostgreSQL ts_rank), ties broken by rating. Matching folds case and accents and knows common
aliases (see vocabulary.py). Bad filters raise `SearchError` with a message fit for a person or a
model to act on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.json_schema import SkipJsonSchema
from sqlalchemy import (
    ColumnElement,
    Select,
    and_,
    case,
    column,
    desc,
    func,
    literal_column,
    or_,
    select,
    table,
)
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.catalog.lexicon import narrower_regions
from sommelier.catalog.reading import Names, take_filters
from sommelier.catalog.vocabulary import (
    BODIES,
    BODY_ALIASES,
    SWEETNESS,
    SWEETNESS_ALIASES,
    TYPE_ALIASES,
    WINE_TYPES,
    canonical_choice,
    canonical_country,
    canonical_food,
    canonical_grape,
    fold,
    query_groups,
)
from sommelier.db.models import Wine
from sommelier.db.search_objects import FTS_TABLE, PG_VECTOR_COLUMN

SUMMARY_CHARS = 400  # per wine in a tool result: what a small model can read quickly


class SearchError(ValueError):
    """A search that cannot run as asked; the message says what to change."""


class SearchFilters(BaseModel):
    """What to look for. Every field is optional, but at least one must be given."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    query: str | None = Field(default=None, description="Free text: style, taste, occasion.")
    type: str | None = Field(default=None, description=f"One of: {', '.join(WINE_TYPES)}.")
    sweetness: str | None = Field(default=None, description=f"One of: {', '.join(SWEETNESS)}.")
    body: str | None = Field(default=None, description=f"One of: {', '.join(BODIES)}.")
    grape: str | None = Field(default=None, description="A grape variety.")
    country: str | None = Field(default=None, description="A country.")
    region: str | None = Field(default=None, description="A region.")
    food: str | None = Field(default=None, description="A food to pair with, e.g. beef, fish.")
    min_price: float | None = Field(default=None, ge=0, description="Lowest price.")
    max_price: float | None = Field(default=None, ge=0, description="Highest price.")
    min_rating: float | None = Field(default=None, ge=0, le=5, description="Lowest rating, 0-5.")
    limit: int = Field(default=5, ge=1, le=20, description="How many wines to return.")
    source: Literal["buy_from_shop", "open_own_bottle"] | None = Field(
        default=None,
        description="buy_from_shop (the default), or open_own_bottle: the person's own "
        "cellar, when they ask what they have or what to open.",
    )
    # Set by the runtime from the person's words and the conversation, never by the model.
    countries: SkipJsonSchema[list[str]] = Field(default_factory=list)  # any of these
    types: SkipJsonSchema[list[str]] = Field(default_factory=list)  # any of these
    exclude_ids: SkipJsonSchema[list[str]] = Field(default_factory=list)
    # Only these wines (the person's cellar, cellar/tool.py): never relaxed, like exclusions.
    only_ids: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_types: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_countries: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_sweetness: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_regions: SkipJsonSchema[list[str]] = Field(default_factory=list)  # "not Champagne"
    # "relevance": the best match first; "cheapest": cheapest first ("something cheaper");
    # "everyday": wines at everyday prices first, for a request that names no budget.
    order: SkipJsonSchema[Literal["relevance", "cheapest", "everyday"]] = "relevance"
    # Filters only the model wrote, that no word of the person's supports: its guesses. A
    # search that matches nothing gives them up first, and says nothing of them.
    guessed: SkipJsonSchema[list[str]] = Field(default_factory=list)
    # The rules that shaped these arguments from the plan and the words (tool_arguments.py),
    # recorded in the tool's notes: the trace and the evaluation count them.
    fired: SkipJsonSchema[list[str]] = Field(default_factory=list)

    def has_criteria(self) -> bool:
        fields = self.model_dump(exclude={"limit", "order", "guessed", "source", "fired"})
        return any(v not in (None, "", []) for v in fields.values())


class WineSummary(BaseModel):
    """What a model needs to choose a wine: at most SUMMARY_CHARS characters as JSON."""

    id: str
    name: str
    producer: str | None
    region: str | None
    grapes: list[str]
    style: str
    price: str | None
    rating: float | None
    description: str | None = None


COUNT_CAP = 1000  # past it "1000+": counting every match of a broad query costs more than it says


class SearchResult(BaseModel):
    total: int
    wines: list[WineSummary]
    more: bool = False  # more than `total` match (the count stopped at COUNT_CAP)
    # The catalog rows behind `wines`, so that what a tool loaded is not loaded again.
    _rows: list[Wine] = PrivateAttr(default_factory=list)

    @property
    def rows(self) -> list[Wine]:
        return self._rows


def style_of(wine: Wine) -> str:
    parts = [wine.type, wine.sweetness, f"{wine.body} body" if wine.body else None]
    return ", ".join(p for p in parts if p)


def price_of(wine: Wine) -> str | None:
    if wine.price is None:
        return None
    return f"{wine.price:.2f} {wine.currency or ''}".strip()


def place_of(wine: Wine) -> str | None:
    return ", ".join(p for p in (wine.region, wine.country) if p) or None


def summarize(wine: Wine) -> WineSummary:
    """A compact summary; the description is cut to keep the whole under SUMMARY_CHARS."""
    summary = WineSummary(
        id=wine.external_id,
        name=wine.name,
        producer=wine.producer if wine.producer != wine.name else None,
        region=place_of(wine),
        grapes=wine.grapes[:3],
        style=style_of(wine),
        price=price_of(wine),
        rating=round(wine.rating_avg, 1) if wine.rating_avg is not None else None,
    )
    room = SUMMARY_CHARS - len(summary.model_dump_json(exclude_none=True)) - 20
    description = wine.description
    if description and room > 30:
        if len(description) > room:
            description = description[: room - 1].rsplit(" ", 1)[0] + "…"
        summary.description = description
    return summary


def _controlled(value: str, name: str, choices: tuple[str, ...], aliases: dict) -> str:
    found = canonical_choice(value, choices, aliases)
    if found is None:
        raise SearchError(f"unknown {name} {value!r}; use one of: {', '.join(choices)}")
    return found


async def _check_country(session: AsyncSession, country: str) -> None:
    known = await _known_countries(session)
    if canonical_country(country) not in {canonical_country(c) for c in known}:
        raise SearchError(
            f"no wines from {country!r} in the catalog; countries: {', '.join(known)}"
        )


async def _known_countries(session: AsyncSession) -> list[str]:
    rows = await session.scalars(
        select(Wine.country).where(Wine.country.is_not(None)).distinct().order_by(Wine.country)
    )
    return [r for r in rows.all() if r]


def _fts_query(groups: list[list[str]], dialect: str, all_of: bool) -> str:
    """Prefix terms: a group's alternatives OR-ed; the groups AND-ed (`all_of`) or OR-ed."""
    cleaned = [[w for w in (re.sub(r"[^a-z0-9]", "", t) for t in g) if w] for g in groups]
    cleaned = [g for g in cleaned if g]
    if dialect == "postgresql":
        parts = ["(" + " | ".join(f"{w}:*" for w in g) + ")" for g in cleaned]
        return (" & " if all_of else " | ").join(parts)
    parts = ["(" + " OR ".join(f'"{w}"*' for w in g) + ")" for g in cleaned]
    return (" AND " if all_of else " OR ").join(parts)


async def search_wines(
    session: AsyncSession,
    filters: SearchFilters,
    *,
    words_as_filters: bool = False,
    count: bool = True,
    names: Names = Names(),
    explain: bool = True,
) -> SearchResult:
    """The best-rated matches, a page at a time: in the indexes' order, so a page is an index
    walk that stops early. Free text first needs every word (fewer, better rows, far less to
    rank on a large catalog); when that does not fill the page, any word (the rows with every
    word still rank first). `count`: how many match, up to COUNT_CAP (a second, capped
    statement, only when the page is full); the agent's tools do without.
    `explain`: an empty result for a country the catalog does not have raises a SearchError
    that lists the countries it has (the CLI); the agent's search relaxes instead.
    `words_as_filters`: a person's own query ("full bodied red for steak", the CLI) has its
    style, body, sweetness and food words read as filters. The agent's tools leave it off:
    their query holds only what the person's words did not support, which ranks, never
    excludes."""
    _check_request(filters)
    if words_as_filters:
        filters = words_to_filters(filters, names)
    conditions = _conditions(filters)
    groups = query_groups(filters.query or "")
    if filters.query and not groups and not conditions:
        raise SearchError(f"the query {filters.query!r} has no words to search for")
    dialect = session.get_bind().dialect.name
    wines: Sequence[Wine] = []
    for all_of in [True, False] if len(groups) > 1 else [False]:
        page, matching = _statements(filters, conditions, groups, dialect, all_of)
        wines = (await session.scalars(page)).all()
        if len(wines) >= filters.limit:
            break
    if _for_the_table(filters) and not all(_after_dinner(w) for w in wines):
        # Ranked after the table wines, a Sauternes still came as the second of two wines for
        # "a Sauvignon Blanc for goat cheese salad": beside a wine for the table, none of them.
        wines = [w for w in wines if not _after_dinner(w)]
    if not wines and filters.country and explain:
        # Only an empty result can mean an unknown country: check it then, not on every search.
        await _check_country(session, filters.country)
    total, more = len(wines), False
    if count and len(wines) >= filters.limit:
        capped = matching.limit(COUNT_CAP + 1).subquery()
        total = await session.scalar(select(func.count()).select_from(capped)) or 0
        total, more = min(total, COUNT_CAP), total > COUNT_CAP
    result = SearchResult(total=total, more=more, wines=[summarize(w) for w in wines])
    result._rows = list(wines)
    return result


def words_to_filters(filters: SearchFilters, names: Names = Names()) -> SearchFilters:
    """Free-text words that name a style, body, sweetness or food become those filters (unless
    the filter is set): an indexed condition instead of thousands of rows to rank."""
    if not filters.query:
        return filters
    taken, rest = take_filters(filters.query, names)
    update: dict[str, Any] = {k: v for k, v in taken.items() if getattr(filters, k) is None}
    if not update:
        return filters
    update["query"] = rest if query_groups(rest) else None
    return filters.model_copy(update=update)


def _check_request(filters: SearchFilters) -> None:
    # "everyday" without criteria: the house picks for a request with nothing to match.
    if not filters.has_criteria() and filters.order != "everyday":
        raise SearchError("give a query or at least one filter (type, country, grape, price, …)")
    low, high = filters.min_price, filters.max_price
    if low is not None and high is not None and low > high:
        raise SearchError(
            f"price range is upside down: min_price {low:g} is above max_price {high:g}"
        )


def _of_type(types: list[str]) -> ColumnElement[bool]:
    """Wines of these types; a dessert wine is a sweet Port too (a person who asks for "a sweet
    wine for pastéis de nata" means a Port as much as a Sauternes)."""
    if "dessert" not in types:
        return Wine.type.in_(types)
    return or_(Wine.type.in_(types), and_(Wine.type == "fortified", Wine.sweetness == "sweet"))


def _conditions(filters: SearchFilters) -> list[ColumnElement[bool]]:
    """The filters as SQL conditions; controlled values are checked and canonicalised."""
    conditions: list[ColumnElement[bool]] = []
    if filters.type:
        conditions.append(_of_type([_controlled(filters.type, "type", WINE_TYPES, TYPE_ALIASES)]))
    if filters.types:
        types = [_controlled(t, "type", WINE_TYPES, TYPE_ALIASES) for t in filters.types]
        conditions.append(_of_type(types))
    if filters.sweetness:
        sweetness = _controlled(filters.sweetness, "sweetness", SWEETNESS, SWEETNESS_ALIASES)
        conditions.append(Wine.sweetness == sweetness)
    if filters.body:
        conditions.append(Wine.body == _controlled(filters.body, "body", BODIES, BODY_ALIASES))
    if filters.country:
        conditions.append(Wine.country_key == canonical_country(filters.country))
    if filters.countries:
        conditions.append(Wine.country_key.in_([canonical_country(c) for c in filters.countries]))
    if filters.grape:
        grape = f"|{canonical_grape(filters.grape)}"
        conditions.append(Wine.grape_keys.contains(grape, autoescape=True))
    if filters.region:
        # A broader region is any catalog region in it ("loire": Sancerre).
        within = [fold(filters.region), *narrower_regions().get(fold(filters.region), ())]
        conditions.append(or_(*(Wine.region_key.contains(r, autoescape=True) for r in within)))
    if filters.food:
        conditions.append(Wine.food_keys.contains(canonical_food(filters.food), autoescape=True))
    return conditions + _bounds_and_exclusions(filters)


def _bounds_and_exclusions(filters: SearchFilters) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if filters.min_price is not None:
        conditions.append(Wine.price >= filters.min_price)
    if filters.max_price is not None:
        conditions.append(Wine.price <= filters.max_price)
    if filters.min_rating is not None:
        conditions.append(Wine.rating_avg >= filters.min_rating)
    if filters.exclude_ids:
        conditions.append(Wine.external_id.not_in(filters.exclude_ids))
    if filters.only_ids:
        conditions.append(Wine.external_id.in_(filters.only_ids))
    if filters.exclude_types:
        conditions.append(Wine.type.not_in(filters.exclude_types))
    if filters.exclude_countries:
        keys = [canonical_country(c) for c in filters.exclude_countries]
        conditions.append(Wine.country_key.not_in(keys))
    if filters.exclude_sweetness:
        # A wine of unknown sweetness is not turned down for it.
        refused = Wine.sweetness.in_(filters.exclude_sweetness)
        conditions.append(or_(Wine.sweetness.is_(None), ~refused))
    for region in filters.exclude_regions:
        conditions.append(~Wine.region_key.contains(fold(region), autoescape=True))
    return conditions


def _statements(
    filters: SearchFilters,
    conditions: list[ColumnElement[bool]],
    groups: list[list[str]],
    dialect: str,
    all_of: bool,
) -> tuple[Select[Wine], Select[Any]]:
    """The page, and the ids of every match (for a count). Free text is ranked on ids and its
    score alone, then the page's few rows are read: sorting thousands of whole rows is what
    made a broad query slow."""
    matching: Select[Any] = select(Wine.id).where(*conditions)
    if not groups:
        page = select(Wine).where(*conditions).order_by(*_ordering(filters, None))
        return page.limit(filters.limit), matching
    matching, score, higher_is_better = _match_text(matching, groups, dialect, all_of)
    rank = desc(score) if higher_is_better else score
    ids = (
        matching.add_columns(score.label("score"))
        .order_by(*_ordering(filters, rank))
        .limit(filters.limit)
        .subquery()
    )
    outer = desc(ids.c.score) if higher_is_better else ids.c.score
    page = select(Wine).join(ids, ids.c.id == Wine.id).order_by(*_ordering(filters, outer))
    return page, matching


def _match_text(
    statement: Select[Any], groups: list[list[str]], dialect: str, all_of: bool
) -> tuple[Select[Any], Any, bool]:
    """Restrict to full-text matches: the statement, the match's score, and whether a higher
    score is better (PostgreSQL's ts_rank) or worse (SQLite's bm25)."""
    fts = _fts_query(groups, dialect, all_of)
    if dialect == "postgresql":
        vector: Any = literal_column(f"wines.{PG_VECTOR_COLUMN}")
        tsquery = func.to_tsquery("simple", fts)
        return statement.where(vector.op("@@")(tsquery)), func.ts_rank(vector, tsquery), True
    fts_table = table(FTS_TABLE, column("rowid"), column("rank"))
    matched = statement.join(fts_table, fts_table.c.rowid == Wine.id).where(
        literal_column(FTS_TABLE).op("MATCH")(fts)
    )
    return matched, fts_table.c.rank, False


def _ordering(filters: SearchFilters, rank: Any) -> list[Any]:
    order: list[Any] = [_table_wines_first()] if _for_the_table(filters) else []
    if filters.order == "cheapest":
        order = [Wine.price.is_(None), Wine.price]
    elif filters.order == "everyday":
        order = [_price_tier()] if filters.has_criteria() else [_price_tier(), _versatile()]
    order += [rank] if rank is not None else []
    # The same expressions as the rank indexes (db/search_objects.py): a literal 0, since a
    # bound parameter would not match the indexed expression.
    best = desc(func.coalesce(Wine.rating_avg, literal_column("0")))
    return [*order, best, desc(Wine.rating_count), Wine.id]


EVERYDAY = (8.0, 60.0)  # what most people spend on a bottle for dinner


def _for_the_table(filters: SearchFilters) -> bool:
    """A grape, or a savoury dish, and nothing sweet asked for: cheese keeps its Port and its
    Sauternes, a classic match. (Another search keeps the rank index's walk.)"""
    food = canonical_food(filters.food) if filters.food else None
    if not (filters.grape or (food and food not in ("dessert", "cheese"))):
        return False
    asked = {filters.type, *filters.types}
    sweet = filters.sweetness in ("sweet", "medium-sweet")
    return not (sweet or asked & {"dessert", "fortified"})


def _after_dinner(wine: Wine) -> bool:
    """A sweet wine: a dessert wine, or a fortified one that is not dry (a Fino is dry, and
    the catalog's match for tapas and shellfish)."""
    return wine.type == "dessert" or (wine.type == "fortified" and wine.sweetness != "dry")


def _table_wines_first() -> Any:
    """Wines for the table before the sweet ones, for a grape or a savoury dish: a Sauternes
    beside the Sancerre for "a Sauvignon Blanc for goat cheese salad" (Sauternes is one;
    unseen52). Ranked on rating alone, it came before table wines that matched too."""
    sweet = (Wine.type == "dessert") | (
        (Wine.type == "fortified") & (func.coalesce(Wine.sweetness, "sweet") != "dry")
    )
    return case((sweet, 1), else_=0)


def _versatile() -> Any:
    """The house picks, for a request with nothing to match (a dish no list knows, "a bottle
    for tonight"): dry table wines of light or medium body first, as a sommelier pours with a
    meal it does not know. By rating alone they were an Amarone, a Zinfandel and a Tokaji for
    borscht, pierogi and Adana kebap alike; with sparkling wines among them, a Champagne and a
    Franciacorta for borscht, mantı and tochitură (unseen50)."""
    return case(
        (
            Wine.type.in_(VERSATILE_TYPES)
            & func.coalesce(Wine.sweetness, "dry").in_(("dry", "off-dry"))
            & func.coalesce(Wine.body, "medium").in_(("very light", "light", "medium")),
            0,
        ),
        else_=1,
    )


VERSATILE_TYPES = ("red", "white", "rosé")


def _price_tier() -> Any:
    """0 for everyday prices, 1 for a little more or less, 2 for icons; unknown prices last."""
    low, high = EVERYDAY
    return case(
        (Wine.price.between(low, high), 0),
        (Wine.price.between(low / 2, high * 2.5), 1),
        (Wine.price.is_not(None), 2),
        else_=3,
    )


async def get_wines(session: AsyncSession, ids: list[str]) -> list[Wine]:
    """Wines by external id, in the order asked; unknown ids are left out."""
    if not ids:
        return []
    found = {
        w.external_id: w
        for w in (await session.scalars(select(Wine).where(Wine.external_id.in_(ids)))).all()
    }
    return [found[i] for i in ids if i in found]
