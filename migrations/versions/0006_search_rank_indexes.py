"""indexes in the search's default order (best rated first)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

from sommelier.db.search_objects import RANK_INDEXES

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for statement in RANK_INDEXES.values():
        op.execute(statement)
    op.execute("ANALYZE wines" if op.get_bind().dialect.name == "postgresql" else "ANALYZE")


def downgrade() -> None:
    for name in RANK_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
