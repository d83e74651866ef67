"""admin_turns_daily (people who got no answer); SQL NULL instead of JSON 'null'

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

from sommelier.db import admin_views

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON_COLUMNS = (
    ("messages", "reply"),
    ("messages", "wine_ids"),
    ("inbound_messages", "reply_parts"),
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.execute(admin_views.turns_daily_statement(dialect))
    null = "'null'::jsonb" if dialect == "postgresql" else "'null'"
    for table, column in JSON_COLUMNS:
        op.execute(f"UPDATE {table} SET {column} = NULL WHERE {column} = {null}")


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS admin_turns_daily")
