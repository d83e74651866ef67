"""inbound_messages.run: which run of a message's turn owns its row (a stalled job run again
takes it over, and the run it took it from may no longer store or send its reply)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows written before: their first run.
    op.add_column(
        "inbound_messages",
        sa.Column("run", sa.Integer(), nullable=False, server_default="1"),
    )


def downgrade() -> None:
    # Not a batch (a copied table): the admin views read inbound_messages, and SQLite (3.35+)
    # drops a plain column in place.
    op.drop_column("inbound_messages", "run")
