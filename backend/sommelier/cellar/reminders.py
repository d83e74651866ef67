"""Weekly reminders (issue 48, item 6), opt-in per cellar: once a week the chat that turned them
on hears which bottles reached their peak or started to decline since it was last told.

Like the questions after opening (cellar/opened.py) they are rows, not timers: `cellars.remind_at`
is when the next is due. A round takes a due cellar with a conditional UPDATE that moves its
`remind_at` a LEASE ahead, so of several processes one takes it, and one that died before
finishing gives it back after the lease. Finished, it is due a WEEK later; a send that failed,
RETRY later. Each bottle row keeps the readiness it was last told (`told`), so a reminder says
what changed and nothing twice; turning reminders on counts the present as told.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.cellar.store import Held, held
from sommelier.cellar.windows import Readiness
from sommelier.db.models import Cellar, CellarBottle, utcnow

WEEK = timedelta(days=7)
LEASE = timedelta(minutes=5)
RETRY = timedelta(minutes=30)
BATCH = 50
TOLD = (Readiness.peak, Readiness.past)  # what a reminder is about


@dataclass(frozen=True, slots=True)
class Due:
    cellar_id: int
    chat_id: int
    language: str | None


async def switch(
    session: AsyncSession, cellar: Cellar, chat_id: int | None, language: str | None
) -> None:
    """Reminders on (to `chat_id`, a week from now) or off (None). On, what the cellar holds now
    counts as told: the first reminder says what changes from here."""
    cellar.remind_chat_id = chat_id
    cellar.remind_language = language
    cellar.remind_at = utcnow() + WEEK if chat_id is not None else None
    if chat_id is not None:
        await _told(session, await held(session, cellar))


async def take_due(session: AsyncSession, now: datetime | None = None) -> list[Due]:
    """The cellars whose reminder is due, each taken by this caller alone."""
    now = now or utcnow()
    due = and_(Cellar.remind_chat_id.is_not(None), Cellar.remind_at <= now)
    found = (
        await session.execute(
            select(Cellar.id, Cellar.remind_chat_id, Cellar.remind_language)
            .where(due)
            .order_by(Cellar.remind_at)
            .limit(BATCH)
        )
    ).all()
    taken = []
    for row in found:
        claim = (
            update(Cellar)
            .where(Cellar.id == row.id, due)
            .values(remind_at=now + LEASE)
            .execution_options(synchronize_session=False)
        )
        if getattr(await session.execute(claim), "rowcount", 0) == 1:
            taken.append(Due(row.id, row.remind_chat_id, row.remind_language))
    return taken


async def news(session: AsyncSession, cellar_id: int) -> list[Held]:
    """The bottles at their peak or past it that the chat has not been told so."""
    cellar = await session.get(Cellar, cellar_id)
    if cellar is None:
        return []
    return [
        h
        for h in await held(session, cellar)
        if h.readiness in TOLD and h.bottle.told != h.readiness
    ]


async def done(
    session: AsyncSession, cellar_id: int, told: list[Held] | None, now: datetime | None = None
) -> None:
    """The round's end: what was told (None: the send failed), and when the next is due."""
    now = now or utcnow()
    if told is not None:
        await _told(session, told)
    cellar = await session.get(Cellar, cellar_id)
    if cellar is not None and cellar.remind_chat_id is not None:
        cellar.remind_at = now + (WEEK if told is not None else RETRY)


async def _told(session: AsyncSession, bottles: list[Held]) -> None:
    """Each bottle row's readiness as told now (by id: the rows may come from another
    session, read before the message was sent)."""
    for readiness in {h.readiness for h in bottles}:
        ids = [h.bottle.id for h in bottles if h.readiness == readiness]
        query = update(CellarBottle).where(CellarBottle.id.in_(ids)).values(told=str(readiness))
        await session.execute(query.execution_options(synchronize_session=False))
