"""Names and DDL of the full-text search objects, which differ per database.

SQLite gets an FTS5 table kept in step with `wines` by triggers; PostgreSQL gets a stored
generated tsvector column with a GIN index. Both are created by the first migration and are
invisible to autogenerate (see migrations/env.py).
"""

from __future__ import annotations

FTS_TABLE = "wines_fts"
PG_FTS_INDEX = "ix_wines_search_tsv"

SQLITE_DDL = [
    f"""CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
        search_text, content='wines', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
    )""",
    f"""CREATE TRIGGER wines_fts_insert AFTER INSERT ON wines BEGIN
        INSERT INTO {FTS_TABLE}(rowid, search_text) VALUES (new.id, new.search_text);
    END""",
    f"""CREATE TRIGGER wines_fts_delete AFTER DELETE ON wines BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
    END""",
    f"""CREATE TRIGGER wines_fts_update AFTER UPDATE OF search_text ON wines BEGIN
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, search_text)
        VALUES ('delete', old.id, old.search_text);
        INSERT INTO {FTS_TABLE}(rowid, search_text) VALUES (new.id, new.search_text);
    END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS wines_fts_update",
    "DROP TRIGGER IF EXISTS wines_fts_delete",
    "DROP TRIGGER IF EXISTS wines_fts_insert",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
]
PG_VECTOR_COLUMN = "search_vector"
PG_DDL = [
    # Stored, so ranking reads the vector instead of re-parsing every matching row's text.
    f"ALTER TABLE wines ADD COLUMN {PG_VECTOR_COLUMN} tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple', search_text)) STORED",
    f"CREATE INDEX {PG_FTS_INDEX} ON wines USING gin ({PG_VECTOR_COLUMN})",
]
PG_DROP = [
    f"DROP INDEX IF EXISTS {PG_FTS_INDEX}",
    f"ALTER TABLE wines DROP COLUMN IF EXISTS {PG_VECTOR_COLUMN}",
]


# The search's default order as indexes (migration 0006): a page of the best-rated matches is
# an index walk that stops after a few rows, instead of sorting every match. Expression
# indexes, so written here and invisible to autogenerate like the full-text objects.
RANK_ORDER = "coalesce(rating_avg, 0) DESC, rating_count DESC, id"
RANK_INDEXES = {
    "ix_wines_rank": f"CREATE INDEX ix_wines_rank ON wines ({RANK_ORDER})",
    "ix_wines_type_rank": f"CREATE INDEX ix_wines_type_rank ON wines (type, {RANK_ORDER})",
}


def is_search_object(name: str) -> bool:
    return (
        name.startswith(FTS_TABLE)
        or name in (PG_FTS_INDEX, PG_VECTOR_COLUMN)
        or name in RANK_INDEXES
    )
