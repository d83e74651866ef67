"""feedback (👍/👎 per reply and card), taste profiles, admin_feedback_daily, messages.trace_id

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from sommelier.db import admin_views

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    # A plain ADD COLUMN: SQLite does not rebuild the table, so the views may stay.
    op.add_column("messages", sa.Column("trace_id", sa.String(length=32), nullable=True))
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("card", sa.Integer(), nullable=False),
        sa.Column("wine_id", sa.String(length=64), nullable=True),
        sa.Column("value", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_feedback_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_feedback_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
        sa.UniqueConstraint("user_id", "message_id", "card", name=op.f("uq_feedback_user_id")),
    )
    op.create_table(
        "taste_profiles",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("likes", JSON, nullable=False),
        sa.Column("dislikes", JSON, nullable=False),
        sa.Column("max_price", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_taste_profiles_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_taste_profiles")),
    )
    op.execute(admin_views.feedback_daily_statement(op.get_bind().dialect.name))


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS admin_feedback_daily")
    op.drop_table("taste_profiles")
    op.drop_table("feedback")
    # SQLite rebuilds `messages` to drop a column and checks every view against it: the views
    # over it go first and come back after.
    dialect = op.get_bind().dialect.name
    for statement in [*admin_views.drop_statements(), "DROP VIEW IF EXISTS admin_turns_daily"]:
        op.execute(statement)
    with op.batch_alter_table("messages") as batch_op:
        batch_op.drop_column("trace_id")
    for statement in admin_views.create_statements(dialect):
        op.execute(statement)
    op.execute(admin_views.turns_daily_statement(dialect))
