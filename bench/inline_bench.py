"""Inline mode: seconds from a query's words to its results (the catalog search the inline
handler runs, no model), 200 queries in eight languages, on a generated catalog (the X-Wines
100k file is not on this machine; `catalog_bench.py` builds the same kind).

.venv/bin/python bench/inline_bench.py [--size 100000] [--databases sqlite,postgres]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_bench import generated_catalog
from common import Timer, fresh_app, percentiles, report, run

from sommelier.catalog.importer import import_catalog
from sommelier.catalog.tools import CatalogTools

QUERIES = [
    "red under 20 for pizza",
    "something sparkling for a birthday",
    "crisp white for oysters",
    "ein trockener Riesling bis 15 Euro",
    "vino tinto para carne asada",
    "un rosé pas cher pour l'apéro",
    "un rosso toscano sotto i 30 euro",
    "vinho branco para peixe",
    "красное сухое до 20 евро",
    "een volle rode wijn bij wild",
    "pinot noir",
    "no French wine, a full bodied red",
]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.csv"
        generated_catalog(path, args.size)
        for kind in args.databases.split(","):
            async with fresh_app(kind) as app:
                await import_catalog(app.sessions, [path])
                catalog = CatalogTools(app.sessions)
                await catalog.search_words(QUERIES[0], limit=8)  # the names, read once
                samples = []
                for i in range(args.queries):
                    with Timer() as timer:
                        await catalog.search_words(QUERIES[i % len(QUERIES)], limit=8)
                    samples.append(timer.seconds * 1000)
                median, p95 = percentiles(samples)
                report(
                    f"inline results, generated {args.size:,} wines ({kind})",
                    [("median ms", f"{median:.1f}"), ("p95 ms", f"{p95:.1f}")],
                )


if __name__ == "__main__":
    run(main)
