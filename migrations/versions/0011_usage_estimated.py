"""model_calls.usage_estimated: token counts the server did not report, counted here

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows written before: counts as the server reported them (or none).
    op.add_column(
        "model_calls",
        sa.Column("usage_estimated", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    # Not a batch (a copied table): the admin views read model_calls, and SQLite (3.35+) drops
    # a plain column in place.
    op.drop_column("model_calls", "usage_estimated")
