"""model_calls.rules: the reply rules that fired on each model call's answer; a daily view

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from sommelier.db import admin_views

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows written before: NULL, not an empty list (nothing was recorded then).
    json = sa.JSON(none_as_null=True).with_variant(
        postgresql.JSONB(none_as_null=True), "postgresql"
    )
    op.add_column("model_calls", sa.Column("rules", json, nullable=True))
    op.execute(admin_views.rule_firings_daily_statement(op.get_bind().dialect.name))


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS admin_rule_firings_daily")
    op.drop_column("model_calls", "rules")
