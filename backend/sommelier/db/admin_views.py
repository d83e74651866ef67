"""SQL views for the questions an admin asks. Documented in README ("Reading the database")."""

from __future__ import annotations

from sommelier.db.turns import InboundStatus

VIEWS = ("admin_recent_conversations", "admin_model_calls_daily")


def _day(column: str, dialect: str) -> str:
    return f"date({column})" if dialect == "sqlite" else f"CAST({column} AS date)"


def create_statements(dialect: str) -> list[str]:
    return [
        """CREATE VIEW admin_recent_conversations AS
        SELECT c.id AS conversation_id, u.id AS user_id, u.display_name, u.telegram_id,
               u.local_name, c.channel, c.started_at, c.last_activity_at, c.closed_at,
               c.close_reason,
               (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS message_count,
               (SELECT count(*) FROM model_calls mc WHERE mc.conversation_id = c.id)
                   AS model_call_count
        FROM conversations c JOIN users u ON u.id = c.user_id""",
        f"""CREATE VIEW admin_model_calls_daily AS
        SELECT {_day("created_at", dialect)} AS day, model,
               count(*) AS calls,
               count(DISTINCT turn_id) AS turns,
               sum(CASE WHEN purpose IN ('repair', 'compaction') THEN 1 ELSE 0 END) AS retries,
               sum(CASE WHEN outcome IN ('invalid', 'error', 'refused') THEN 1 ELSE 0 END)
                   AS failures,
               sum(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END) AS network_errors,
               sum(coalesce(prompt_tokens, 0)) AS prompt_tokens,
               sum(coalesce(completion_tokens, 0)) AS completion_tokens,
               avg(latency_ms) AS avg_latency_ms
        FROM model_calls
        GROUP BY {_day("created_at", dialect)}, model""",
    ]


def drop_statements() -> list[str]:
    return [f"DROP VIEW IF EXISTS {name}" for name in VIEWS]


S = InboundStatus
ANSWERED = (S.ok, S.refused, S.answered)
NO_ANSWER = (
    S.failed, S.error, S.timeout, S.exhausted, S.reset, S.cancelled, S.interrupted, S.busy,
    S.undelivered,
)  # fmt: skip
TURNED_AWAY = (S.rate_limited, S.too_long)


def _listed(statuses: tuple[InboundStatus, ...]) -> str:
    return ", ".join(f"'{s}'" for s in statuses)


def turns_daily_statement(dialect: str) -> str:
    """admin_turns_daily (migration 0004): per day and channel, the messages people sent and
    how many got an answer, no answer, or a notice instead (rate limit, too long)."""
    return f"""CREATE VIEW admin_turns_daily AS
        SELECT {_day("received_at", dialect)} AS day, channel,
               count(*) AS messages,
               sum(CASE WHEN status IN ({_listed(ANSWERED)}) THEN 1 ELSE 0 END) AS answered,
               sum(CASE WHEN status IN ({_listed(NO_ANSWER)}) THEN 1 ELSE 0 END) AS no_answer,
               sum(CASE WHEN status IN ({_listed(TURNED_AWAY)}) THEN 1 ELSE 0 END)
                   AS turned_away,
               sum(CASE WHEN status = '{S.received}' THEN 1 ELSE 0 END) AS in_progress
        FROM inbound_messages
        GROUP BY {_day("received_at", dialect)}, channel"""


def feedback_daily_statement(dialect: str) -> str:
    """admin_feedback_daily (migration 0005): per day, the replies given, 👍 and 👎, and the
    three wines with the most 👎 that day."""
    day = _day("m.created_at", dialect)
    fday = _day("f.updated_at", dialect)
    join = "string_agg(wine_id, ', ')" if dialect == "postgresql" else "group_concat(wine_id, ', ')"
    worst = f"""(SELECT {join} FROM (
                   SELECT f.wine_id FROM feedback f
                   WHERE f.value < 0 AND f.wine_id IS NOT NULL AND {fday} = d.day
                   GROUP BY f.wine_id ORDER BY count(*) DESC, f.wine_id LIMIT 3) AS worst)"""
    return f"""CREATE VIEW admin_feedback_daily AS
        SELECT d.day,
               (SELECT count(*) FROM messages m
                WHERE m.role = 'assistant' AND {day} = d.day) AS replies,
               (SELECT count(*) FROM feedback f WHERE f.value > 0 AND {fday} = d.day)
                   AS thumbs_up,
               (SELECT count(*) FROM feedback f WHERE f.value < 0 AND {fday} = d.day)
                   AS thumbs_down,
               {worst} AS most_disliked
        FROM (SELECT DISTINCT {_day("updated_at", dialect)} AS day FROM feedback
              UNION SELECT DISTINCT {_day("created_at", dialect)} FROM messages
              WHERE role = 'assistant') AS d"""


def rule_firings_daily_statement(dialect: str) -> str:
    """admin_rule_firings_daily (migration 0013): per day and reply rule (chat/rules.py), how
    often it fired and on how many turns: a rule that fires often is a model's habit worth
    constraining; one that never fires is a candidate for deletion."""
    day = _day("mc.created_at", dialect)
    if dialect == "postgresql":
        each = "jsonb_array_elements_text(mc.rules) AS r(rule)"
        rule = "r.rule"
    else:
        each = "json_each(mc.rules) AS r"
        rule = "r.value"
    return f"""CREATE VIEW admin_rule_firings_daily AS
        SELECT {day} AS day, {rule} AS rule, count(*) AS firings,
               count(DISTINCT mc.turn_id) AS turns
        FROM model_calls mc, {each}
        WHERE mc.rules IS NOT NULL
        GROUP BY {day}, {rule}"""


def prompt_cache_daily_statement(dialect: str) -> str:
    """admin_prompt_cache_daily (migration 0015): per day and model, the prompt tokens sent,
    those the server reported reading from its prompt cache, and the cached share of the calls
    that reported it (a server that reports nothing leaves it empty, not 0)."""
    day = _day("created_at", dialect)
    return f"""CREATE VIEW admin_prompt_cache_daily AS
        SELECT {day} AS day, model,
               count(*) AS calls,
               sum(coalesce(prompt_tokens, 0)) AS prompt_tokens,
               sum(coalesce(cached_tokens, 0)) AS cached_tokens,
               round(100.0 * sum(CASE WHEN cached_tokens IS NOT NULL THEN cached_tokens END)
                     / nullif(sum(CASE WHEN cached_tokens IS NOT NULL THEN prompt_tokens END), 0),
                     1) AS cached_percent
        FROM model_calls
        GROUP BY {day}, model"""


def cellars_statement() -> str:
    """admin_cellars (migration 0017): every bottle row still held, with whose cellar it is (a
    person's, or a group's chat), and when it was last opened."""
    return """CREATE VIEW admin_cellars AS
        SELECT c.id AS cellar_id, c.user_id, u.display_name, c.chat_id,
               b.id AS bottle_id, b.wine_id, b.producer, b.name, b.vintage, b.quantity,
               b.location, b.price_paid, b.currency, b.drink_from, b.drink_until, b.source,
               b.added_at,
               (SELECT max(e.at) FROM cellar_events e
                WHERE e.bottle_id = b.id AND e.kind = 'opened') AS last_opened
        FROM cellar_bottles b
        JOIN cellars c ON c.id = b.cellar_id
        LEFT JOIN users u ON u.id = c.user_id
        WHERE b.quantity > 0"""
