"""Feedback and the taste profile, for every front end: 👍/👎 on a reply or a card (stored
once per person, reply and card; sent to Langfuse as a score on the turn's trace), what the
person told us about their taste, `/profile` and `/forget`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.catalog.reading import Names, Reading
from sommelier.catalog.search import get_wines
from sommelier.chat.taste import (
    Taste,
    describe,
    learn_from_feedback,
    learn_from_words,
    says_something_about_taste,
)
from sommelier.db import preferences as queries
from sommelier.db import repositories as repo
from sommelier.db.repositories import Person
from sommelier.i18n.languages import base
from sommelier.i18n.translations import N_, translator
from sommelier.observability.tracing import Tracer

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 500
NOTHING_TO_RATE = N_("There is no reply of mine to rate yet.")
LIKED = N_("Thanks, noted.")
DISLIKED = N_("Thanks, I'll do better.")


@dataclass(frozen=True, slots=True)
class Rated:
    ok: bool
    text: str  # what to tell the person


class Preferences:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        tracer: Tracer,
        names: Callable[[], Awaitable[Names]],
    ) -> None:
        self.sessions = sessions
        self.tracer = tracer
        self.names = names

    async def taste(self, session: AsyncSession, user_id: int) -> Taste:
        return Taste.of(await queries.load_taste(session, user_id))

    async def learn(self, session: AsyncSession, user_id: int, reading: Reading) -> None:
        """After an answer is stored: remember what the person said about their taste.
        No model call, and no read for the most messages, which say nothing about it."""
        if not says_something_about_taste(reading):
            return
        taste = await self.taste(session, user_id)
        if learn_from_words(taste, reading):
            await self._save(session, user_id, taste)

    async def _save(self, session: AsyncSession, user_id: int, taste: Taste) -> None:
        await queries.save_taste(
            session, user_id, taste.likes, taste.dislikes, taste.max_price, taste.currency
        )

    async def rate(
        self,
        person: Person,
        value: int,
        *,
        message_id: int | None = None,
        conversation_id: int | None = None,
        chat_id: int | None = None,
        card: int = 0,
        reason: str | None = None,
        language: str | None = None,
    ) -> Rated:
        """A 👍 (1) or 👎 (-1) on a reply (`card` 0) or on its n-th card. Without `message_id`,
        the latest reply of `conversation_id`. A press in a Telegram chat (`chat_id`) may rate
        any reply of that chat, and counts for the person who pressed."""
        t = translator(language or base(person.language))
        reason = (reason or "").strip()[:MAX_REASON_CHARS] or None
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            reply = await queries.rated_reply(
                session, account.id, message_id, conversation_id, chat_id
            )
            if reply is None or not 0 <= card <= len(reply.wine_ids):
                return Rated(False, t(NOTHING_TO_RATE))
            wine_id = await queries.save_feedback(session, account.id, reply, card, value, reason)
            if wine_id is not None:
                await self.learn_from_press(session, account.id, wine_id, value)
        if reply.trace_id is not None:
            score_id = f"fb-{reply.message_id}-{card}-{account.id}"  # a person's, in a group too
            self._score(reply.trace_id, score_id, card, wine_id, value, reason)
        return Rated(True, t(LIKED if value > 0 else DISLIKED))

    async def learn_from_press(
        self, session: AsyncSession, user_id: int, wine_id: str, value: int
    ) -> None:
        wines = await get_wines(session, [wine_id])
        if not wines:
            return
        grapes = wines[0].grapes
        wine = {"id": wine_id, "grape": grapes[0] if grapes else None, "country": wines[0].country}
        taste = await self.taste(session, user_id)
        if learn_from_feedback(taste, wine, value):
            await self._save(session, user_id, taste)

    def _score(
        self,
        trace_id: str,
        score_id: str,
        card: int,
        wine_id: str | None,
        value: int,
        reason: str | None,
    ) -> None:
        comment = " ".join(p for p in (wine_id, reason) if p) or None
        name = "user_feedback" if card == 0 else "card_feedback"
        try:
            self.tracer.score_feedback(trace_id, name, float(value), comment, score_id=score_id)
        except Exception:  # a tracing outage never loses the press (it is stored)
            log.warning("feedback score not sent", exc_info=True, extra={"event": "score_failed"})

    async def taste_of(self, person: Person) -> Taste:
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            return await self.taste(session, account.id)

    async def profile(self, person: Person, language: str | None = None) -> list[str]:
        """What is remembered, in `language` (default: the person's client language)."""
        currency = (await self.names()).currency
        taste = await self.taste_of(person)
        return describe(taste, language or base(person.language), currency)

    async def forget(self, person: Person) -> bool:
        async with self.sessions() as session, session.begin():
            account = await repo.get_or_create_user(session, person)
            return await queries.delete_taste(session, account.id)
