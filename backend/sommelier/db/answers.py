"""Storing an answered turn: the person's message and the reply, the turn's model calls linked
to the reply, and the inbound message's status.

On PostgreSQL that is one statement (data-modifying WITH queries), atomic without a transaction:
one round trip instead of five (BEGIN, three statements, COMMIT). Elsewhere it is the three
statements, in the caller's transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, column, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.db import repositories as repo
from sommelier.db.models import Base, InboundMessage, JsonType, Message, ModelCall, utcnow

_MESSAGES = Base.metadata.tables[Message.__tablename__]
_CALLS = Base.metadata.tables[ModelCall.__tablename__]
_INBOUND = Base.metadata.tables[InboundMessage.__tablename__]
_MESSAGE_KEYS = ("role", "text", "reply", "wine_ids", "created_at", "trace_id")
_CALL_KEYS = tuple(
    c.name
    for c in _CALLS.columns
    if c.name not in {"id", "message_id", "conversation_id", "created_at"}
)


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
    person, reply = exchange
    # No parameter is named after a column: SQLAlchemy would read it as one more column for
    # the UPDATE in the WITH to set.
    parameters: dict[str, Any] = {
        "conversation": conversation_id,
        "inbound": inbound_id,
        "finished": utcnow(),
        "calls": [{key: call.get(key) for key in _CALL_KEYS} for call in calls],
        **{f"user_{key}": person[key] for key in _MESSAGE_KEYS},
        **{f"assistant_{key}": reply[key] for key in _MESSAGE_KEYS},
    }
    stored_id: int = (await session.execute(_IN_ONE_STATEMENT, parameters)).scalar_one()
    return stored_id


def _message_values(who: str) -> dict[str, Any]:
    return {
        "conversation_id": bindparam("conversation", type_=_MESSAGES.c.conversation_id.type),
        **{k: bindparam(f"{who}_{k}", type_=_MESSAGES.c[k].type) for k in _MESSAGE_KEYS},
    }


def _in_one_statement() -> Select[Any]:
    """Built once, with bound parameters only, and cacheable: no multi-row VALUES (SQLAlchemy
    compiles those anew every time). The calls come as one JSON array of rows, and the reply
    is inserted from the person's row, so it runs after it and gets the larger id."""
    asked = insert(_MESSAGES).values(_message_values("user")).returning(_MESSAGES.c.id)
    asked_cte = asked.cte("asked")
    answer_values = _message_values("assistant")
    answered = (
        insert(_MESSAGES)
        .from_select(list(answer_values), select(*answer_values.values()).select_from(asked_cte))
        .returning(_MESSAGES.c.id)
        .cte("answered")
    )
    reply_id = select(answered.c.id).scalar_subquery()
    rows = (
        func.jsonb_to_recordset(bindparam("calls", type_=JsonType))
        .table_valued(*(column(k, _CALLS.c[k].type) for k in _CALL_KEYS))
        .render_derived("attempts", with_types=True)
    )
    calls = (
        insert(_CALLS)
        .from_select(
            ["conversation_id", "message_id", "created_at", *_CALL_KEYS],
            select(
                bindparam("conversation", type_=_CALLS.c.conversation_id.type),
                reply_id,
                bindparam("finished", type_=_CALLS.c.created_at.type),
                *(rows.c[k] for k in _CALL_KEYS),
            ),
        )
        .cte("calls")
    )
    finished = (
        update(_INBOUND)
        .where(_INBOUND.c.id == bindparam("inbound"))
        .values(status="ok", finished_at=bindparam("finished"), reply_message_id=reply_id)
        .cte("finished")
    )
    return select(answered.c.id).add_cte(calls).add_cte(finished)


_IN_ONE_STATEMENT = _in_one_statement()
