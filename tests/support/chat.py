"""Helpers to run real turns (real database, real catalog) against a scripted model."""

from __future__ import annotations

from sqlalchemy import select

from sommelier.app import App
from sommelier.chat.service import ChatService
from sommelier.db.models import InboundMessage, Message, ModelCall
from sommelier.db.repositories import Person

ANA = Person(channel="cli", local_name="ana", display_name="Ana")


def service(app: App, model, **settings) -> ChatService:  # type: ignore[no-untyped-def]
    if settings:
        app.settings = app.settings.model_copy(update=settings)
    return app.chat_service(model)


async def stored_messages(app: App) -> list[Message]:
    async with app.sessions() as session:
        return list((await session.scalars(select(Message).order_by(Message.id))).all())


async def model_calls(app: App) -> list[ModelCall]:
    async with app.sessions() as session:
        return list((await session.scalars(select(ModelCall).order_by(ModelCall.id))).all())


async def inbound(app: App) -> list[InboundMessage]:
    async with app.sessions() as session:
        return list(
            (await session.scalars(select(InboundMessage).order_by(InboundMessage.id))).all()
        )
