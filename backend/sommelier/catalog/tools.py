"""The sommelier's tools over the catalog: search_wines and get_wine."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.tools import Tool, ToolError, ToolOutput, ToolRegistry
from sommelier.catalog.search import (
    SearchError,
    SearchFilters,
    get_wines,
    place_of,
    price_of,
    search_wines,
    style_of,
)


class GetWineArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(min_length=1, max_length=5, description="Wine ids from a search.")


def catalog_tools(sessions: async_sessionmaker[AsyncSession]) -> ToolRegistry:
    async def search(filters: SearchFilters) -> ToolOutput:
        async with sessions() as session:
            try:
                result = await search_wines(session, filters)
            except SearchError as exc:
                raise ToolError(str(exc)) from None
        data = result.model_dump(exclude_none=True)
        if not result.wines:
            data["hint"] = "nothing matched; relax a filter or try other words"
        return ToolOutput(data, frozenset(w.id for w in result.wines))

    async def get_wine(args: GetWineArgs) -> ToolOutput:
        async with sessions() as session:
            wines = await get_wines(session, args.ids)
        missing = [i for i in args.ids if i not in {w.external_id for w in wines}]
        details = [
            {
                "id": w.external_id,
                "name": w.name,
                "producer": w.producer,
                "region": place_of(w),
                "grapes": w.grapes,
                "style": style_of(w),
                "acidity": w.acidity,
                "abv": w.abv,
                "vintage": w.vintage,
                "price": price_of(w),
                "rating": round(w.rating_avg, 2) if w.rating_avg is not None else None,
                "ratings": w.rating_count,
                "food_pairings": w.food_pairings,
                "description": w.description,
            }
            for w in wines
        ]
        data: dict = {"wines": details}
        if missing:
            data["not_found"] = missing
        return ToolOutput(data, frozenset(w.external_id for w in wines))

    registry = ToolRegistry()
    registry.add(
        Tool(
            "search_wines",
            "Search the wine catalog with filters and free text. Returns matching wines (id, "
            "name, producer, region, grapes, style, price, rating) and the total count.",
            SearchFilters,
            search,
        )
    )
    registry.add(
        Tool(
            "get_wine",
            "Full details (food pairings, vintage, ABV, description) of wines by id.",
            GetWineArgs,
            get_wine,
        )
    )
    return registry
