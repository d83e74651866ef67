"""Storing an answered turn: the person's message and the reply, the turn's model calls linked
to the reply, and the inbound message's status.

On PostgreSQL that is one statement (data-modifying WITH queries), atomic without a transaction:
one round trip instead of five (BEGIN, three statements, COMMIT). Elsewhere it is the three
statements, in the caller's transaction.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.db import repositories as repo
from sommelier.db.models import Base, InboundMessage, Message, ModelCall, utcnow

_MESSAGES = Base.metadata.tables[Message.__tablename__]
_CALLS = Base.metadata.tables[ModelCall.__tablename__]
_INBOUND = Base.metadata.tables[InboundMessage.__tablename__]
_MESSAGE_KEYS = ("role", "text", "reply", "wine_ids", "created_at", "trace_id")
_CALL_KEYS = tuple(
    c.name for c in _CALLS.columns if c.name not in {"id", "message_id", "conversation_id"}
)
_WHO = ("user", "assistant")


async def store_answer(
    session: AsyncSession,
    conversation_id: int,
    exchange: list[dict[str, Any]],
    calls: list[dict[str, Any]],
    inbound_id: int,
) -> int:
    """Stores the exchange (the user's row, then the assistant's), the calls and the inbound
    status "ok"; the reply's message id."""
    if session.get_bind().dialect.name != "postgresql":
        _, stored = await repo.insert_exchange(session, conversation_id, exchange)
        await repo.insert_model_calls(session, [{**c, "message_id": stored} for c in calls])
        await repo.finish_inbound(session, inbound_id, "ok", stored)
        return stored
    now = utcnow()
    # No parameter is named after a column: SQLAlchemy would read it as one more column for
    # the UPDATE in the WITH to set.
    parameters: dict[str, Any] = {
        "conversation": conversation_id,
        "inbound": inbound_id,
        "finished": now,
    }
    for who, row in zip(_WHO, exchange, strict=True):
        parameters.update({f"{who}_{key}": row[key] for key in _MESSAGE_KEYS})
    for i, call in enumerate(calls):
        parameters.update({f"c{i}_{key}": call.get(key) for key in _CALL_KEYS})
        parameters[f"c{i}_created_at"] = now
    reply_id: int = (await session.execute(_in_one_statement(len(calls)), parameters)).scalar_one()
    return reply_id


@cache
def _in_one_statement(calls: int) -> Select[Any]:
    """Built once per number of model calls, with bound parameters only."""

    def bound(table: Any, name: str, key: str) -> Any:
        return bindparam(name, type_=table.c[key].type)

    exchange = (
        insert(_MESSAGES)
        .values(
            [
                {
                    "conversation_id": bound(_MESSAGES, "conversation", "conversation_id"),
                    **{k: bound(_MESSAGES, f"{who}_{k}", k) for k in _MESSAGE_KEYS},
                }
                for who in _WHO
            ]
        )
        .returning(_MESSAGES.c.id, _MESSAGES.c.role)
        .cte("exchange")
    )
    is_reply = exchange.c.role == "assistant"
    reply_id = select(exchange.c.id).where(is_reply).scalar_subquery()
    finished = (
        update(_INBOUND)
        .where(_INBOUND.c.id == bindparam("inbound"))
        .values(status="ok", finished_at=bindparam("finished"), reply_message_id=reply_id)
        .cte("finished")
    )
    query = select(exchange.c.id).where(is_reply).add_cte(finished)
    if calls:
        rows = [
            {
                "conversation_id": bound(_CALLS, "conversation", "conversation_id"),
                "message_id": reply_id,
                **{k: bound(_CALLS, f"c{i}_{k}", k) for k in _CALL_KEYS},
            }
            for i in range(calls)
        ]
        query = query.add_cte(insert(_CALLS).values(rows).cte("calls"))
    return query
