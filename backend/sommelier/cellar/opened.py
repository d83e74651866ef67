"""After a bottle is opened (issue 48, item 5): one bottle off the cellar, and later the question
"how was it?", whose stars become the person's rating (and their taste, chat/preferences.py)
and whose short note is kept with it.

The question is a row, not a timer: `cellar_events` keeps when it is due. Whatever runs the
schedule (bot/asks.py) takes due questions with a conditional UPDATE, so of several processes
only one sends each; one that took a question and died before sending it gives it back after
LEASE. A restart loses none and repeats none (a crash between Telegram's answer and storing the
message id repeats that one).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.catalog.search import get_wines
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import Owner, add_rows, cellar_of, held, kept_wines
from sommelier.db.models import CellarBottle, CellarEvent, User, utcnow
from sommelier.i18n.languages import base

LEASE = timedelta(minutes=5)  # a question taken and not sent for this long is due again
BATCH = 50  # questions taken at a time


@dataclass(frozen=True, slots=True)
class Opened:
    event_id: int
    wine: str  # "Catena Malbec 2019"
    left: int  # bottles of that wine still in the cellar


@dataclass(frozen=True, slots=True)
class Question:
    event_id: int
    chat_id: int
    wine: str
    language: str | None  # the opener's, as their client last said it


def label(bottle: CellarBottle) -> str:
    return " ".join(p for p in (bottle.name, bottle.vintage) if p)


async def open_one(
    session: AsyncSession,
    owner: Owner,
    wine_id: str,
    user_id: int,
    chat_id: int,
    ask_after: timedelta,
) -> Opened | None:
    """One bottle of the catalog wine off the owner's cellar (its readiest bottle), and the
    question about it due `ask_after` from now; None when the cellar holds none of it."""
    cellar = await cellar_of(session, owner)
    rows = [h for h in await held(session, cellar) if h.bottle.wine_id == wine_id]
    if not rows:
        return None
    bottle = rows[0].bottle  # `held` puts the readiest first
    bottle.quantity -= 1
    bottle.updated_at = utcnow()
    event = CellarEvent(
        bottle_id=bottle.id, user_id=user_id, kind="opened", quantity=1, chat_id=chat_id,
        ask_at=utcnow() + ask_after,
    )  # fmt: skip
    session.add(event)
    await session.flush()
    left = sum(h.bottle.quantity for h in rows)
    return Opened(event.id, label(bottle), left)


async def ask_in(
    session: AsyncSession, opened_id: int, chat_id: int, after: timedelta
) -> datetime | None:
    """The question about an opened bottle of this chat moved to `after` from now (the person
    says when): when it is due, or None for an event that is not this chat's, or was asked."""
    at = utcnow() + after
    query = (
        update(CellarEvent)
        .where(CellarEvent.id == opened_id, CellarEvent.kind == "opened")
        .where(CellarEvent.chat_id == chat_id, CellarEvent.message_id.is_(None))
        .where(CellarEvent.asked_at.is_(None))
        .values(ask_at=at)
        .execution_options(synchronize_session=False)
    )
    return at if getattr(await session.execute(query), "rowcount", 0) == 1 else None


async def take_due(session: AsyncSession, now: datetime | None = None) -> list[Question]:
    """The questions due now, each taken by this caller alone (a conditional UPDATE)."""
    now = now or utcnow()
    due = and_(
        CellarEvent.kind == "opened",
        CellarEvent.ask_at <= now,
        CellarEvent.message_id.is_(None),
        or_(CellarEvent.asked_at.is_(None), CellarEvent.asked_at < now - LEASE),
    )
    found = (
        await session.execute(
            select(CellarEvent, CellarBottle, User.language)
            .join(CellarBottle, CellarBottle.id == CellarEvent.bottle_id)
            .outerjoin(User, User.id == CellarEvent.user_id)
            .where(due)
            .order_by(CellarEvent.ask_at)
            .limit(BATCH)
        )
    ).all()
    taken = []
    for event, bottle, language in found:
        claim = update(CellarEvent).where(CellarEvent.id == event.id, due).values(asked_at=now)
        claim = claim.execution_options(synchronize_session=False)  # rows compared in SQL
        took = getattr(await session.execute(claim), "rowcount", 0) == 1  # a CursorResult's
        if took and event.chat_id is not None:
            taken.append(Question(event.id, event.chat_id, label(bottle), base(language)))
    return taken


async def asked(session: AsyncSession, event_id: int, message_id: int | None) -> None:
    """The question was sent as `message_id`; None gives it back (the send failed)."""
    values = {"message_id": message_id} if message_id is not None else {"asked_at": None}
    query = update(CellarEvent).where(CellarEvent.id == event_id).values(values)
    await session.execute(query.execution_options(synchronize_session=False))


async def add_catalog_wine(
    session: AsyncSession, owner: Owner, wine_id: str, user_id: int | None, source: str
) -> tuple[str, int] | None:
    """One bottle of a catalog wine into the owner's cellar: its name and how many the cellar
    now holds; None for an id the catalog lacks."""
    wines = await get_wines(session, [wine_id])
    if not wines:
        return None
    row = CellarRow(0, wines[0].name, 1, wines[0].producer, wine_id=wine_id)
    await add_rows(session, await cellar_of(session, owner), [row], user_id, source)
    kept = await kept_wines(session, owner)
    return wines[0].name, kept[wine_id].quantity if wine_id in kept else 1


@dataclass(frozen=True, slots=True)
class Rating:
    event_id: int
    wine: str
    wine_id: str | None  # the catalog's, for the taste profile


async def rate(
    session: AsyncSession, opened_id: int, chat_id: int, user_id: int, stars: int
) -> Rating | None:
    """The person's stars for the bottle an `opened` event of this chat took off; pressed again,
    the same rating changes. None for an event that is not this chat's."""
    found = (
        await session.execute(
            select(CellarEvent, CellarBottle)
            .join(CellarBottle, CellarBottle.id == CellarEvent.bottle_id)
            .where(CellarEvent.id == opened_id, CellarEvent.kind == "opened")
            .where(CellarEvent.chat_id == chat_id)
        )
    ).first()
    if found is None:
        return None
    opened, bottle = found
    rated = await session.scalar(
        select(CellarEvent).where(
            CellarEvent.bottle_id == bottle.id,
            CellarEvent.kind == "rated",
            CellarEvent.user_id == user_id,
            CellarEvent.at >= opened.at,
        )
    )
    if rated is None:
        rated = CellarEvent(bottle_id=bottle.id, user_id=user_id, kind="rated", chat_id=chat_id)
        session.add(rated)
    rated.rating = float(stars)
    await session.flush()
    return Rating(rated.id, label(bottle), bottle.wine_id)


async def thanked(session: AsyncSession, rating_id: int, message_id: int) -> None:
    """The thanks for a rating was sent as `message_id`: a reply to it is the rating's note."""
    query = update(CellarEvent).where(CellarEvent.id == rating_id).values(message_id=message_id)
    await session.execute(query.execution_options(synchronize_session=False))


async def note(
    session: AsyncSession, chat_id: int, replied_to: int, user_id: int, text: str
) -> bool:
    """A reply to a rating's thanks, by the person who rated: kept as its note."""
    query = (
        update(CellarEvent)
        .where(CellarEvent.kind == "rated", CellarEvent.chat_id == chat_id)
        .where(CellarEvent.message_id == replied_to, CellarEvent.user_id == user_id)
        .values(note=text)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(await session.execute(query), "rowcount", 0))
