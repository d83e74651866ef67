"""The "how was it?" questions of opened bottles as rows (cellar/opened.py), on SQLite and
PostgreSQL: a question is taken by one caller only, even by several at once; a question taken
and never sent is due again after the lease; one given back is due at once; one sent is never
due again; a rating is the rater's, changed by a second press."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from sommelier.cellar.files import CellarRow
from sommelier.cellar.opened import LEASE, asked, open_one, rate, take_due
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from sommelier.db.models import CellarEvent, utcnow
from sommelier.db.repositories import get_or_create_user
from tests.support.chat import ANA

CHAT = 4242


async def _opened(app, bottles: int = 3) -> list[int]:  # type: ignore[no-untyped-def]
    """Ana opens `bottles` bottles of a wine she has 5 of; the ids of their questions."""
    row = CellarRow(1, "Catena Malbec", 5, "Catena Zapata", "2021", "rack B")
    async with app.sessions() as session, session.begin():
        owner = await owner_of(session, ANA)
        await add_rows(session, await cellar_of(session, owner), [row], None, "csv")
    ids = []
    for _ in range(bottles):
        async with app.sessions() as session, session.begin():
            user = await get_or_create_user(session, ANA)
            owner = await owner_of(session, ANA)
            done = await open_one(session, owner, "sm-059", user.id, CHAT, timedelta(0))
            assert done is not None
            ids.append(done.event_id)
    assert done.left == 5 - bottles
    return ids


async def _take(app, now=None):  # type: ignore[no-untyped-def]
    async with app.sessions() as session, session.begin():
        return [q.event_id for q in await take_due(session, now)]


async def test_several_takers_at_once_take_each_question_once(app) -> None:  # type: ignore[no-untyped-def]
    ids = await _opened(app)
    taken = await asyncio.gather(*(_take(app) for _ in range(4)))
    flat = [i for batch in taken for i in batch]
    assert sorted(flat) == sorted(ids)  # every one, and none twice
    assert await _take(app) == []


async def test_a_question_never_sent_is_due_again_after_the_lease(app) -> None:  # type: ignore[no-untyped-def]
    first, second, third = await _opened(app)
    assert sorted(await _take(app)) == [first, second, third]
    async with app.sessions() as session, session.begin():
        await asked(session, first, 9001)  # sent
        await asked(session, second, None)  # the send failed: given back
    assert await _take(app) == [second]  # at once; the third waits for its lease
    later = utcnow() + LEASE + timedelta(seconds=1)
    assert sorted(await _take(app, later)) == [second, third]  # the first never again


async def test_a_rating_is_the_raters_and_a_second_press_changes_it(app) -> None:  # type: ignore[no-untyped-def]
    (opened,) = await _opened(app, bottles=1)
    async with app.sessions() as session, session.begin():
        user = await get_or_create_user(session, ANA)
        assert await rate(session, opened, CHAT + 1, user.id, 5) is None  # not that chat's
        first = await rate(session, opened, CHAT, user.id, 5)
        again = await rate(session, opened, CHAT, user.id, 2)
    assert first is not None and again is not None and first.event_id == again.event_id
    assert first.wine_id == "sm-059"
    async with app.sessions() as session:
        ratings = (
            await session.scalars(select(CellarEvent.rating).where(CellarEvent.kind == "rated"))
        ).all()
    assert ratings == [2.0]


async def test_what_a_cellar_holds_is_read_again_whenever_it_changes(app) -> None:  # type: ignore[no-untyped-def]
    """A turn's view of the cellar is kept per process; every change is seen by the next turn."""
    from sommelier.cellar.store import forget, kept_wines

    async def held() -> dict[str, int]:
        async with app.sessions() as session:
            kept = await kept_wines(session, await owner_of(session, ANA))
            await session.commit()
        return {wine: k.quantity for wine, k in kept.items()}

    async def add(row: CellarRow) -> None:
        async with app.sessions() as session, session.begin():
            await add_rows(
                session, await cellar_of(session, await owner_of(session, ANA)), [row], None, "csv"
            )

    assert await held() == {}
    await add(CellarRow(1, "Catena Malbec", 2, "Catena Zapata", wine_id="sm-059"))
    assert await held() == {"sm-059": 2}
    assert await held() == {"sm-059": 2}  # unchanged: kept
    async with app.sessions() as session, session.begin():
        user = await get_or_create_user(session, ANA)
        owner = await owner_of(session, ANA)
        await open_one(session, owner, "sm-059", user.id, 1, timedelta(hours=1))
    await add(CellarRow(2, "Pio Cesare Barolo", 1, "Pio Cesare", wine_id="sm-026"))
    assert await held() == {"sm-059": 1, "sm-026": 1}
    async with app.sessions() as session, session.begin():
        user = await get_or_create_user(session, ANA)
        await open_one(session, await owner_of(session, ANA), "sm-026", user.id, 1, timedelta(0))
        await add_rows(
            session, await cellar_of(session, await owner_of(session, ANA)),
            [CellarRow(3, "Catena Malbec", 1, "Catena Zapata", wine_id="sm-059")], None, "csv",
        )  # fmt: skip
    assert await held() == {"sm-059": 2}  # one bottle off, one on: the rows' latest change tells
    async with app.sessions() as session, session.begin():
        await forget(session, await owner_of(session, ANA))
    assert await held() == {}
