"""taste_profiles.budget_currency: a remembered budget keeps the currency it was said in

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL for budgets remembered before: they were read as the catalog's currency.
    op.add_column("taste_profiles", sa.Column("budget_currency", sa.String(length=3)))


def downgrade() -> None:
    with op.batch_alter_table("taste_profiles") as batch:
        batch.drop_column("budget_currency")
