"""Transactional, idempotent catalog import.

Every file is read and validated before anything is written. With bad rows the import aborts
and writes nothing, unless `skip_invalid` is set: then the good rows go in and the bad ones are
reported. Re-importing the same file updates rows in place (upsert on the stable external id).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Numeric, cast, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.catalog.formats import ParsedFile, read_catalog_file
from sommelier.catalog.records import RowError
from sommelier.db.models import Wine, WineRating, utcnow
from sommelier.db.session import dialect_insert

BATCH = 1000
ProgressCallback = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class ImportReport:
    wines_inserted: int = 0
    wines_updated: int = 0
    ratings_upserted: int = 0
    skipped: list[RowError] = field(default_factory=list)

    @property
    def wines(self) -> int:
        return self.wines_inserted + self.wines_updated


class CatalogImportError(Exception):
    """Bad rows made the import abort; nothing was written."""

    def __init__(self, errors: Sequence[RowError]) -> None:
        self.errors = list(errors)
        rows = bad_rows(self.errors)
        problems = f" ({len(self.errors)} problems)" if len(self.errors) > rows else ""
        super().__init__(f"{rows} bad row(s){problems}; nothing was imported")


def bad_rows(errors: Sequence[RowError]) -> int:
    """Rows, not problems: one row can break several fields."""
    return len({(e.path, e.line) for e in errors})


async def import_catalog(
    sessions: async_sessionmaker[AsyncSession],
    paths: Sequence[Path],
    *,
    skip_invalid: bool = False,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    # Parsing is CPU and file work: keep it off the event loop (the bot may be running).
    parsed = [await asyncio.to_thread(read_catalog_file, path) for path in paths]
    # Wines before ratings, whatever order the files were named in.
    parsed.sort(key=lambda p: p.kind == "xwines-ratings")
    errors = [e for p in parsed for e in p.errors]

    async with sessions() as session, session.begin():
        known = set((await session.scalars(select(Wine.external_id))).all())
        incoming = {record.id for p in parsed for _, record in p.wines}
        for p in parsed:
            errors.extend(_dangling_ratings(p, known | incoming))
        if errors and not skip_invalid:
            raise CatalogImportError(sorted(errors, key=lambda e: (e.path, e.line)))

        report = ImportReport(skipped=sorted(errors, key=lambda e: (e.path, e.line)))
        bad_lines = {(e.path, e.line) for e in errors}
        for p in parsed:
            await _write_wines(session, p, known, report, progress)
            known |= {record.id for _, record in p.wines}
        for p in parsed:
            good = [(line, r) for line, r in p.ratings if (p.path, line) not in bad_lines]
            await _write_ratings(session, p.path, good, report, progress)
        if report.ratings_upserted:
            await _fold_ratings(session)
    # Fresh statistics: the planner then walks the rank indexes instead of sorting matches.
    async with sessions() as session, session.begin():
        dialect = session.get_bind().dialect.name
        await session.execute(text("ANALYZE wines" if dialect == "postgresql" else "ANALYZE"))
    return report


def _dangling_ratings(parsed: ParsedFile, wine_ids: set[str]) -> list[RowError]:
    return [
        RowError(parsed.path, line, "WineID", f"no wine {record.wine_external_id} in the catalog")
        for line, record in parsed.ratings
        if record.wine_external_id not in wine_ids
    ]


async def _write_wines(
    session: AsyncSession,
    parsed: ParsedFile,
    known: set[str],
    report: ImportReport,
    progress: ProgressCallback | None,
) -> None:
    rows = [record.row() | {"updated_at": utcnow()} for _, record in parsed.wines]
    # The last occurrence of an id in one file wins, as a re-import would.
    rows = list({row["external_id"]: row for row in rows}.values())
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        statement = dialect_insert(session, Wine).values(batch)
        columns = {c: statement.excluded[c] for c in batch[0] if c != "external_id"}
        if parsed.kind == "xwines-wines":
            # Ratings are folded from wine_ratings; a wines file must not reset them.
            columns.pop("rating_avg", None)
            columns.pop("rating_count", None)
        await session.execute(
            statement.on_conflict_do_update(index_elements=["external_id"], set_=columns)
        )
        if progress:
            progress(f"wines from {Path(parsed.path).name}", start + len(batch), len(rows))
    inserted = sum(1 for row in rows if row["external_id"] not in known)
    report.wines_inserted += inserted
    report.wines_updated += len(rows) - inserted


async def _write_ratings(
    session: AsyncSession,
    path: str,
    ratings: list[tuple[int, Any]],
    report: ImportReport,
    progress: ProgressCallback | None,
) -> None:
    if not ratings:
        return
    wine_ids = {e: i for e, i in (await session.execute(select(Wine.external_id, Wine.id))).all()}
    rows = {
        (r.source, r.source_rating_id): {
            "wine_id": wine_ids[r.wine_external_id],
            "source": r.source,
            "source_rating_id": r.source_rating_id,
            "rater_id": r.rater_id,
            "vintage": r.vintage,
            "rating": r.rating,
            "rated_at": r.rated_at,
        }
        for _, r in ratings
    }
    values = list(rows.values())
    for start in range(0, len(values), BATCH):
        batch = values[start : start + BATCH]
        statement = dialect_insert(session, WineRating).values(batch)
        await session.execute(
            statement.on_conflict_do_update(
                index_elements=["source", "source_rating_id"],
                set_={
                    c: statement.excluded[c]
                    for c in ("wine_id", "rater_id", "vintage", "rating", "rated_at")
                },
            )
        )
        if progress:
            progress(f"ratings from {Path(path).name}", start + len(batch), len(values))
    report.ratings_upserted += len(values)


async def _fold_ratings(session: AsyncSession) -> None:
    """Average rating and count per wine, from every stored rating of that wine."""
    stats = (
        select(
            WineRating.wine_id,
            func.avg(WineRating.rating).label("avg"),
            func.count().label("n"),
        )
        .group_by(WineRating.wine_id)
        .subquery()
    )
    await session.execute(
        update(Wine)
        .where(Wine.id == stats.c.wine_id)
        .values(rating_avg=func.round(cast(stats.c.avg, Numeric), 2), rating_count=stats.c.n)
    )
