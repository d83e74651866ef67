"""model_turns: one model endpoint's queue shared by every process (chat/model_queue.py)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "model_turns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint", sa.String(length=720), nullable=False),
        sa.Column("party", sa.String(length=200), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("admitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_turns")),
    )
    op.create_index("ix_model_turns_endpoint", "model_turns", ["endpoint", "finished_at"])


def downgrade() -> None:
    op.drop_index("ix_model_turns_endpoint", table_name="model_turns")
    op.drop_table("model_turns")
