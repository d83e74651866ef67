"""conversations per chat; inbound messages linked to the reply they got

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sommelier.db import admin_views

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _views_around(change):  # type: ignore[no-untyped-def]
    """SQLite rebuilds an altered table and checks every view against it: the admin views go
    first and come back after."""
    for statement in admin_views.drop_statements():
        op.execute(statement)
    change()
    for statement in admin_views.create_statements(op.get_bind().dialect.name):
        op.execute(statement)


def upgrade() -> None:
    _views_around(_upgrade)


def downgrade() -> None:
    _views_around(_downgrade)


def _upgrade() -> None:
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("chat_id", sa.BigInteger(), nullable=True))
        batch_op.create_index(
            "ix_conversations_chat_open", ["channel", "chat_id", "closed_at"], unique=False
        )
    with op.batch_alter_table("inbound_messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reply_message_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_inbound_messages_reply_message_id_messages"),
            "messages",
            ["reply_message_id"],
            ["id"],
            ondelete="SET NULL",
        )


def _downgrade() -> None:
    with op.batch_alter_table("inbound_messages", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_inbound_messages_reply_message_id_messages"), type_="foreignkey"
        )
        batch_op.drop_column("reply_message_id")
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_index("ix_conversations_chat_open")
        batch_op.drop_column("chat_id")
