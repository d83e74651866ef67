"""The cellar at scale (issue 48): a CellarTracker-style export of N bottle rows (wines of the
X-Wines 1k catalog where `../shared/data/xwines` is there, else of the starter catalog, half
of them named as the catalog names them and half as wines it lacks) read, matched and added in
one transaction; then the cellar listed by readiness (`held`, what `/cellar` and
`sommelier cellar list` run), and the agent's cellar search as a turn pays for it (the
cellar's catalog wines read, `kept_wines`, then `search_wines` among them for a red with
lamb), median and p95 over repeated calls (the cellar's holdings kept per process until its
rows change), and the first of them, which reads them. SQLite and PostgreSQL.

.venv/bin/python bench/cellar_bench.py [--rows 10000] [--lists 50] [--databases sqlite,postgres]
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import XWINES, Timer, fresh_app, percentiles, report, run
from sqlalchemy import select

from sommelier.catalog.importer import import_catalog
from sommelier.catalog.search import SearchFilters
from sommelier.catalog.tools import CatalogTools
from sommelier.cellar.files import read_file
from sommelier.cellar.store import Owner, add_rows, cellar_of, held, kept_wines
from sommelier.db.models import User, Wine

HEADER = (
    "iWine", "Quantity", "Location", "Bin", "Price", "Currency", "Vintage", "Wine", "Producer",
    "Type", "Varietal", "Country", "Region", "BeginConsume", "EndConsume",
)  # fmt: skip


def export(wines: list[Wine], rows: int) -> bytes:
    """N rows: a catalog wine, or (every other row) a wine the catalog lacks."""
    pick = random.Random(7)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(HEADER)
    for n in range(rows):
        wine = pick.choice(wines)
        own = n % 2 == 1
        name = f"Domaine Imaginaire {n % 997} Cuvée {n % 13}" if own else wine.name
        producer = f"Domaine Imaginaire {n % 997}" if own else (wine.producer or "")
        writer.writerow([
            n, pick.randint(1, 12), f"Rack {n % 40}", str(n % 100), pick.randint(8, 90), "EUR",
            pick.randint(1990, 2024), name, producer, wine.type.title(),
            (wine.grapes or [""])[0], wine.country or "", wine.region or "", "", "",
        ])  # fmt: skip
    return buffer.getvalue().encode()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--lists", type=int, default=50)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    xwines = XWINES / "XWines_Slim_1K_wines.csv"
    for kind in args.databases.split(","):
        async with fresh_app(kind) as app:
            if xwines.exists():
                await import_catalog(app.sessions, [xwines])
            async with app.sessions() as session:
                wines = list((await session.scalars(select(Wine))).all())
                data = export(wines, args.rows)
                user = User(local_name="bench", display_name="bench")
                session.add(user)
                await session.commit()
                with Timer() as reading:
                    parsed = read_file(data, "bench.csv")
                with Timer() as adding:
                    cellar = await cellar_of(session, Owner(user_id=user.id))
                    added = await add_rows(session, cellar, parsed.rows, user.id, parsed.format)
                    await session.commit()
                samples = []
                for _ in range(args.lists):
                    with Timer() as listing:
                        found = await held(session, cellar)
                    samples.append(listing.seconds * 1000)
                tools = CatalogTools(app.sessions)
                searches = []
                for _ in range(args.lists):
                    with Timer() as searching:
                        async with app.sessions() as turn:  # a turn's own session
                            kept = await kept_wines(turn, Owner(user_id=user.id))
                        asked = SearchFilters(type="red", food="lamb", only_ids=list(kept), limit=3)
                        await tools.search(asked)
                    searches.append(searching.seconds * 1000)
            median, p95 = percentiles(samples)
            search_median, search_p95 = percentiles(searches)
            report(
                f"cellar of {args.rows:,} rows, catalog of {len(wines):,} wines ({kind})",
                [
                    ("file read (s)", f"{reading.seconds:.2f}"),
                    ("matched and added, one transaction (s)", f"{adding.seconds:.2f}"),
                    ("rows matched to the catalog", f"{added.matched:,} of {added.rows:,}"),
                    ("bottle rows held", f"{len(found):,} ({added.bottles:,} bottles)"),
                    ("listed by readiness, median / p95 (ms)", f"{median:.0f} / {p95:.0f}"),
                    ("catalog wines held", f"{len(kept):,}"),
                    (
                        "a turn's cellar search (read + search), median / p95 (ms)",
                        f"{search_median:.0f} / {search_p95:.0f}",
                    ),
                    # The first turn after the cellar changed reads it all again (store.py).
                    ("the first, after the cellar changed (ms)", f"{searches[0]:.0f}"),
                ],
            )


if __name__ == "__main__":
    run(main)
