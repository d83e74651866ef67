"""One person's cellar, read-only, for MCP clients (`sommelier mcp serve --cellar-of NAME`,
issue 48 item 8): an operator's own assistant asks what is in it and what is ready. Nothing is
written, not even the person's row: a name with no cellar is an empty cellar."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.agent.tools import Tool, ToolOutput
from sommelier.cellar.report import render
from sommelier.cellar.store import Held, held
from sommelier.db.models import Cellar, User

NAME = "my_cellar"
URI = "cellar://mine"  # the MCP resource: the same list as the tool's, as JSON


class CellarArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    readiness: Literal["peak", "ready", "too_young", "past"] | None = Field(
        default=None, description="Only the bottles this ready to drink."
    )


def cellar_tool(sessions: async_sessionmaker[AsyncSession], person: str) -> Tool:
    """The tool listing `person`'s cellar (the terminal chat's `--user` name) by readiness."""

    async def run(args: CellarArgs) -> ToolOutput:
        async with sessions() as session:
            found = await _held_by(session, person)
        shown = [h for h in found if args.readiness in (None, h.readiness)]
        data = {"bottles": sum(h.bottle.quantity for h in shown), "wines": [_row(h) for h in shown]}
        return ToolOutput(data, text=render(shown, "en"))

    return Tool(
        NAME,
        f"the bottles in {person}'s own cellar (read-only): each wine, vintage, count, place and "
        "readiness (peak, ready, too_young, past), the readiest first",
        CellarArgs,
        run,
    )


async def _held_by(session: AsyncSession, person: str) -> list[Held]:
    query = select(Cellar).join(User, User.id == Cellar.user_id).where(User.local_name == person)
    cellar = await session.scalar(query)
    return await held(session, cellar) if cellar is not None else []


def _row(h: Held) -> dict[str, Any]:
    b = h.bottle
    return {
        "wine_id": b.wine_id,
        "name": b.name,
        "producer": b.producer,
        "vintage": b.vintage,
        "quantity": b.quantity,
        "place": b.location,
        "readiness": str(h.readiness),
        "peak": [h.window.peak_from, h.window.peak_until],
    }
