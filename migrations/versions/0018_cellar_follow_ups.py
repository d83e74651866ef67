"""the cellar's follow-ups: an opened bottle's question "how was it?" on cellar_events (when it
is due, when a process took it to send, where, and as which message: a rating's note replies
to it); weekly reminders on cellars (to which chat, in which language, next when) and the
readiness each bottle row was last told (cellar_bottles.told)

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sommelier.db import admin_views

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("cellar_events") as table:
        table.add_column(sa.Column("ask_at", NOW, nullable=True))
        table.add_column(sa.Column("asked_at", NOW, nullable=True))
        table.add_column(sa.Column("chat_id", sa.BigInteger(), nullable=True))
        table.add_column(sa.Column("message_id", sa.BigInteger(), nullable=True))
    op.create_index(op.f("ix_cellar_events_ask_at"), "cellar_events", ["ask_at"])
    with op.batch_alter_table("cellars") as table:
        table.add_column(sa.Column("remind_chat_id", sa.BigInteger(), nullable=True))
        table.add_column(sa.Column("remind_language", sa.String(length=16), nullable=True))
        table.add_column(sa.Column("remind_at", NOW, nullable=True))
    op.create_index(op.f("ix_cellars_remind_at"), "cellars", ["remind_at"])
    with op.batch_alter_table("cellar_bottles") as table:
        table.add_column(sa.Column("told", sa.String(length=16), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table, which a view over it forbids: the view goes
    # and comes back (the same view as 0017's).
    op.execute("DROP VIEW IF EXISTS admin_cellars")
    with op.batch_alter_table("cellar_bottles") as table:
        table.drop_column("told")
    op.drop_index(op.f("ix_cellars_remind_at"), table_name="cellars")
    with op.batch_alter_table("cellars") as table:
        for column in ("remind_at", "remind_language", "remind_chat_id"):
            table.drop_column(column)
    op.drop_index(op.f("ix_cellar_events_ask_at"), table_name="cellar_events")
    with op.batch_alter_table("cellar_events") as table:
        for column in ("message_id", "chat_id", "asked_at", "ask_at"):
            table.drop_column(column)
    op.execute(admin_views.cellars_statement())
