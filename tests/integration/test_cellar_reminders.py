"""Weekly reminders as rows (cellar/reminders.py), on SQLite and PostgreSQL: off until turned on;
on, due a week later and taken by one caller only; a reminder says only what changed since the
chat was last told; a failed send is due again soon and forgets nothing; a cellar taken and
never finished is due again after the lease."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sommelier.cellar import reminders
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from sommelier.db.models import utcnow
from tests.support.chat import ANA

CHAT = 5151
MALBEC = CellarRow(1, "Catena Malbec", 2, "Catena Zapata", "2021", "rack B")
# Its own window closed in 2020: past its peak, whatever the year the test runs in.
RIOJA = CellarRow(
    2, "La Rioja Alta Gran Reserva 904", 1, "La Rioja Alta", "2015", "rack A",
    drink_from=2018, drink_until=2020,
)  # fmt: skip


async def _add(app, row: CellarRow, on: bool = False) -> int:  # type: ignore[no-untyped-def]
    async with app.sessions() as session, session.begin():
        cellar = await cellar_of(session, await owner_of(session, ANA))
        await add_rows(session, cellar, [row], None, "csv")
        if on:
            await reminders.switch(session, cellar, CHAT, "de")
        return cellar.id


async def _take(app, now):  # type: ignore[no-untyped-def]
    async with app.sessions() as session, session.begin():
        return await reminders.take_due(session, now)


async def _news(app, cellar_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return [h.bottle.name for h in await reminders.news(session, cellar_id)]


async def test_a_reminder_is_due_weekly_once_and_says_only_what_changed(app) -> None:  # type: ignore[no-untyped-def]
    assert await _take(app, utcnow() + timedelta(days=30)) == []  # off: never due
    cellar_id = await _add(app, MALBEC, on=True)  # what it holds when turned on: counted as told
    await _add(app, RIOJA)  # added since, and past its peak
    assert await _take(app, utcnow() + timedelta(days=6)) == []
    week = utcnow() + reminders.WEEK + timedelta(seconds=1)
    taken = await asyncio.gather(*(_take(app, week) for _ in range(3)))
    (due,) = [d for batch in taken for d in batch]  # one of three takers, once
    assert (due.chat_id, due.language) == (CHAT, "de")
    assert await _news(app, cellar_id) == ["La Rioja Alta Gran Reserva 904"]
    async with app.sessions() as session, session.begin():
        news = await reminders.news(session, cellar_id)
        await reminders.done(session, cellar_id, news, week)
    assert await _news(app, cellar_id) == []  # told once
    assert await _take(app, week + timedelta(days=6)) == []
    assert len(await _take(app, week + reminders.WEEK + timedelta(minutes=1))) == 1


async def test_a_failed_send_is_due_again_soon_and_a_lost_one_after_the_lease(app) -> None:  # type: ignore[no-untyped-def]
    cellar_id = await _add(app, MALBEC, on=True)
    async with app.sessions() as session, session.begin():
        cellar = await cellar_of(session, await owner_of(session, ANA))
        cellar.remind_at = utcnow()  # due now
    (taken,) = await _take(app, utcnow())
    assert await _take(app, utcnow()) == []  # taken: not again within the lease
    later = utcnow() + reminders.LEASE + timedelta(seconds=1)
    assert [d.cellar_id for d in await _take(app, later)] == [cellar_id]  # its taker died
    async with app.sessions() as session, session.begin():
        await reminders.done(session, cellar_id, None, later)  # the send failed
    assert await _take(app, later + reminders.RETRY - timedelta(minutes=1)) == []
    assert len(await _take(app, later + reminders.RETRY + timedelta(minutes=1))) == 1
    assert taken.cellar_id == cellar_id
