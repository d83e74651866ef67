"""The one catalog search, used by the agent's tools and by `sommelier catalog search`.

Filters narrow the set; free text ranks it by full-text relevance (SQLite FTS5 bm25,
PostgreSQL ts_rank), ties broken by rating. Matching folds case and accents and knows common
aliases (see vocabulary.py). Bad filters raise `SearchError` with a message fit for a person or a
model to act on.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema
from sqlalchemy import (
    ColumnElement,
    Select,
    case,
    column,
    desc,
    func,
    literal_column,
    select,
    table,
)
from sqlalchemy.ext.asyncio import AsyncSession

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
    query_terms,
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
    # Set by the runtime from the person's words and the conversation, never by the model.
    countries: SkipJsonSchema[list[str]] = Field(default_factory=list)  # any of these
    exclude_ids: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_types: SkipJsonSchema[list[str]] = Field(default_factory=list)
    exclude_countries: SkipJsonSchema[list[str]] = Field(default_factory=list)
    # "relevance": the best match first; "cheapest": cheapest first ("something cheaper");
    # "everyday": wines at everyday prices first, for a request that names no budget.
    order: SkipJsonSchema[Literal["relevance", "cheapest", "everyday"]] = "relevance"

    def has_criteria(self) -> bool:
        fields = self.model_dump(exclude={"limit", "order"})
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


class SearchResult(BaseModel):
    total: int
    wines: list[WineSummary]


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


def _fts_query(terms: list[str], dialect: str) -> str:
    words = [re.sub(r"[^a-z0-9]", "", t) for t in terms]
    words = [w for w in words if w]
    if dialect == "postgresql":
        return " | ".join(f"{w}:*" for w in words)
    return " OR ".join(f'"{w}"*' for w in words)


async def search_wines(session: AsyncSession, filters: SearchFilters) -> SearchResult:
    # "everyday" without criteria: the house picks for a request with nothing to match.
    if not filters.has_criteria() and filters.order != "everyday":
        raise SearchError("give a query or at least one filter (type, country, grape, price, …)")
    if (
        filters.min_price is not None
        and filters.max_price is not None
        and filters.min_price > filters.max_price
    ):
        raise SearchError(
            f"price range is upside down: min_price {filters.min_price:g} is above "
            f"max_price {filters.max_price:g}"
        )

    conditions: list[ColumnElement[bool]] = []
    if filters.type:
        conditions.append(Wine.type == _controlled(filters.type, "type", WINE_TYPES, TYPE_ALIASES))
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
        conditions.append(
            Wine.grape_keys.contains(f"|{canonical_grape(filters.grape)}", autoescape=True)
        )
    if filters.region:
        conditions.append(Wine.region_key.contains(fold(filters.region), autoescape=True))
    if filters.food:
        conditions.append(Wine.food_keys.contains(canonical_food(filters.food), autoescape=True))
    if filters.min_price is not None:
        conditions.append(Wine.price >= filters.min_price)
    if filters.max_price is not None:
        conditions.append(Wine.price <= filters.max_price)
    if filters.min_rating is not None:
        conditions.append(Wine.rating_avg >= filters.min_rating)
    if filters.exclude_ids:
        conditions.append(Wine.external_id.not_in(filters.exclude_ids))
    if filters.exclude_types:
        conditions.append(Wine.type.not_in(filters.exclude_types))
    if filters.exclude_countries:
        keys = [canonical_country(c) for c in filters.exclude_countries]
        conditions.append(Wine.country_key.not_in(keys))

    dialect = session.bind.dialect.name
    statement: Select[Any] = select(Wine).where(*conditions)
    rank: Any = None
    terms = query_terms(filters.query or "")
    if filters.query and not terms and not conditions:
        raise SearchError(f"the query {filters.query!r} has no words to search for")
    if terms:
        fts = _fts_query(terms, dialect)
        if dialect == "postgresql":
            vector = literal_column(f"wines.{PG_VECTOR_COLUMN}")
            tsquery = func.to_tsquery("simple", fts)
            statement = statement.where(vector.op("@@")(tsquery))
            rank = desc(func.ts_rank(vector, tsquery))
        else:
            fts_table = table(FTS_TABLE, column("rowid"), column("rank"))
            statement = statement.join(fts_table, fts_table.c.rowid == Wine.id).where(
                literal_column(FTS_TABLE).op("MATCH")(fts)
            )
            rank = fts_table.c.rank  # bm25: lower is better
    total = await session.scalar(select(func.count()).select_from(statement.subquery()))
    if not total and filters.country:
        # Only an empty result can mean an unknown country: check it then, not on every search.
        await _check_country(session, filters.country)
    order: list[Any] = []
    if filters.order == "cheapest":
        order = [Wine.price.is_(None), Wine.price]
    elif filters.order == "everyday":
        order = [_price_tier()]
    order += [rank] if rank is not None else []
    order += [desc(func.coalesce(Wine.rating_avg, 0)), desc(Wine.rating_count), Wine.id]
    wines = (await session.scalars(statement.order_by(*order).limit(filters.limit))).all()
    return SearchResult(total=total or 0, wines=[summarize(w) for w in wines])


EVERYDAY = (8.0, 60.0)  # what most people spend on a bottle for dinner


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
