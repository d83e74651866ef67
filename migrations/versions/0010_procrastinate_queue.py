"""The bot's queue for several processes is procrastinate's (bot/queue.py): its schema on
PostgreSQL in place of telegram_updates; admin_turns_daily counts `busy` turns as unanswered

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24

procrastinate's schema is the one of the installed version (pinned in pyproject.toml); moving
to a version with schema migrations means a migration here that runs its SQL files.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
from sqlalchemy.util import await_only

from sommelier.db import admin_views

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")

DROP_QUEUE = """
DO $$ DECLARE f record; BEGIN
  FOR f IN SELECT oid::regprocedure AS signature FROM pg_proc
           WHERE proname LIKE 'procrastinate\\_%' LOOP
    EXECUTE 'DROP FUNCTION IF EXISTS ' || f.signature || ' CASCADE';
  END LOOP;
END $$;
DROP TABLE IF EXISTS procrastinate_events, procrastinate_periodic_defers, procrastinate_jobs,
  procrastinate_workers CASCADE;
DROP TYPE IF EXISTS procrastinate_job_status, procrastinate_job_event_type,
  procrastinate_job_to_defer_v1 CASCADE;
"""


def _run_script(sql: str) -> None:
    """Several statements with dollar-quoted bodies: asyncpg runs such a script in one call
    (SQLAlchemy's own path prepares one statement at a time)."""
    driver = op.get_bind().connection.driver_connection
    await_only(driver.execute(sql))


def _turns_view() -> None:
    op.execute("DROP VIEW IF EXISTS admin_turns_daily")
    op.execute(admin_views.turns_daily_statement(op.get_bind().dialect.name))


def upgrade() -> None:
    op.drop_index("ix_telegram_updates_shard", table_name="telegram_updates")
    op.drop_table("telegram_updates")
    _turns_view()
    if op.get_bind().dialect.name == "postgresql":
        from procrastinate.schema import SchemaManager

        _run_script(SchemaManager.get_schema())


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _run_script(DROP_QUEUE)
    _turns_view()
    op.create_table(
        "telegram_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_telegram_updates")),
    )
    op.create_index("ix_telegram_updates_shard", "telegram_updates", ["shard", "update_id"])
