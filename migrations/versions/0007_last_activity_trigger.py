"""a conversation's last activity follows its messages, in the database

A trigger sets conversations.last_activity_at to the created_at of each message inserted into
it, so a turn that stores its exchange needs no UPDATE of its own (one statement less per turn)
and the column stays true for whatever writes messages.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SET = "UPDATE conversations SET last_activity_at = NEW.created_at WHERE id = NEW.conversation_id"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION messages_touch_conversation() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {SET}; RETURN NULL; END $$"
        )
        op.execute(
            "CREATE TRIGGER messages_touch_conversation AFTER INSERT ON messages "
            "FOR EACH ROW EXECUTE FUNCTION messages_touch_conversation()"
        )
    else:
        op.execute(
            "CREATE TRIGGER messages_touch_conversation AFTER INSERT ON messages "
            f"FOR EACH ROW BEGIN {SET}; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS messages_touch_conversation ON messages")
        op.execute("DROP FUNCTION IF EXISTS messages_touch_conversation()")
    else:
        op.execute("DROP TRIGGER IF EXISTS messages_touch_conversation")
