"""cellars: what a person (or a group) owns, bottle by bottle, and what happened to each;
admin_cellars, a view of each cellar's bottles

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from sommelier.db import admin_views

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    json = sa.JSON(none_as_null=True).with_variant(
        postgresql.JSONB(none_as_null=True), "postgresql"
    )
    now = sa.DateTime(timezone=True)
    op.create_table(
        "cellars",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("chat_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", now, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_cellars_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cellars")),
        sa.UniqueConstraint("chat_id", name=op.f("uq_cellars_chat_id")),
        sa.UniqueConstraint("user_id", name=op.f("uq_cellars_user_id")),
    )
    op.create_table(
        "cellar_bottles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cellar_id", sa.Integer(), nullable=False),
        sa.Column("wine_id", sa.String(length=64), nullable=True),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("producer", sa.String(length=300), nullable=True),
        sa.Column("country", sa.String(length=100), nullable=True),
        sa.Column("region", sa.String(length=200), nullable=True),
        sa.Column("type", sa.String(length=16), nullable=True),
        sa.Column("grapes", json, nullable=False),
        sa.Column("vintage", sa.String(length=8), nullable=True),
        sa.Column("quantity", sa.Integer(), nullable=False),
        sa.Column("location", sa.String(length=200), nullable=True),
        sa.Column("price_paid", sa.Float(), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("drink_from", sa.Integer(), nullable=True),
        sa.Column("drink_until", sa.Integer(), nullable=True),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("added_at", now, nullable=False),
        sa.Column("updated_at", now, nullable=False),
        sa.ForeignKeyConstraint(
            ["cellar_id"],
            ["cellars.id"],
            name=op.f("fk_cellar_bottles_cellar_id_cellars"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cellar_bottles")),
    )
    op.create_index("ix_cellar_bottles_cellar", "cellar_bottles", ["cellar_id", "quantity"])
    op.create_table(
        "cellar_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bottle_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("quantity", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("at", now, nullable=False),
        sa.ForeignKeyConstraint(
            ["bottle_id"],
            ["cellar_bottles.id"],
            name=op.f("fk_cellar_events_bottle_id_cellar_bottles"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_cellar_events_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cellar_events")),
    )
    op.create_index(op.f("ix_cellar_events_bottle_id"), "cellar_events", ["bottle_id"])
    op.execute(admin_views.cellars_statement())


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS admin_cellars")
    op.drop_index(op.f("ix_cellar_events_bottle_id"), table_name="cellar_events")
    op.drop_table("cellar_events")
    op.drop_index("ix_cellar_bottles_cellar", table_name="cellar_bottles")
    op.drop_table("cellar_bottles")
    op.drop_table("cellars")
