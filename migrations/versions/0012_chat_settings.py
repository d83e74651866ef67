"""chat_settings: a group's admins let the bot answer every message (/sommelier_all);
conversations.topic_id: a forum topic's conversation is its own

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_settings",
        sa.Column("channel", sa.String(16), primary_key=True),
        sa.Column("chat_id", sa.BigInteger(), primary_key=True),
        sa.Column("answer_all", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("changed_by", sa.BigInteger(), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("conversations", sa.Column("topic_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    # A plain drop: SQLite (3.35+) drops a column in place, and views read conversations.
    op.drop_column("conversations", "topic_id")
    op.drop_table("chat_settings")
