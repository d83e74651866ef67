"""Helpers to run real turns (real database, real catalog) against a scripted model."""

from __future__ import annotations

from sqlalchemy import select

from sommelier.app import App
from sommelier.chat.service import ChatService
from sommelier.db.models import InboundMessage, Message, ModelCall
from sommelier.db.repositories import Person

ANA = Person(channel="cli", local_name="ana", display_name="Ana")


def service(app: App, model, **settings) -> ChatService:  # type: ignore[no-untyped-def]
    """A chat service over `app` with a scripted model; `settings` are validated like the
    environment's (so "planner" becomes the enum)."""
    if settings:
        app.settings = app.settings.model_validate({**app.settings.model_dump(), **settings})
    return app.chat_service(model)


def native(app: App, model, **settings) -> ChatService:  # type: ignore[no-untyped-def]
    return service(app, model, agent_strategy="native", **settings)


def planner(app: App, model, **settings) -> ChatService:  # type: ignore[no-untyped-def]
    return service(app, model, agent_strategy="planner", **settings)


def tool_messages(request: dict) -> list[str]:  # type: ignore[type-arg]
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def tool_arguments(request: dict) -> list[dict]:  # type: ignore[type-arg]
    """The arguments of every tool call in a request's transcript, as the tools ran them."""
    import json

    calls = [c for m in request["messages"] for c in m.get("tool_calls") or []]
    return [json.loads(c["function"]["arguments"]) for c in calls]


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


async def answered_from_data(app: App, text: str) -> str:
    """A turn the data answers alone: it ends cleanly, shows no card, and asks no model."""
    from tests.support.scripted import ScriptedModel

    model = ScriptedModel([])
    said = await planner(app, model).turn(ANA, text)
    assert said.ok and not said.cards and model.requests == []
    return said.text
