"""Names and DDL of the full-text search objects, which differ per database.

SQLite gets an FTS5 table kept in step with `wines` by triggers; PostgreSQL gets a GIN index on
`to_tsvector('simple', search_text)`. Both are created by the first migration and are invisible
to autogenerate (see migrations/env.py).
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
PG_DDL = [
    f"CREATE INDEX {PG_FTS_INDEX} ON wines USING gin (to_tsvector('simple', search_text))",
]
PG_DROP = [f"DROP INDEX IF EXISTS {PG_FTS_INDEX}"]


def is_search_object(name: str) -> bool:
    return name.startswith(FTS_TABLE) or name == PG_FTS_INDEX
