"""model_calls.cached_tokens (the prompt tokens a server took from its prompt cache) and
admin_prompt_cache_daily

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from sommelier.db import admin_views

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # A plain ADD COLUMN: SQLite does not rebuild the table, so the views over it may stay.
    op.add_column("model_calls", sa.Column("cached_tokens", sa.Integer(), nullable=True))
    op.execute(admin_views.prompt_cache_daily_statement(op.get_bind().dialect.name))


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS admin_prompt_cache_daily")
    # SQLite (3.35+) drops a plain column in place, with the other views left standing.
    op.drop_column("model_calls", "cached_tokens")
