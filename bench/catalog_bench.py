"""Catalog figures: X-Wines import throughput, and search latency on 1k and 100k wines.

.venv/bin/python bench/catalog_bench.py [--sizes 1000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import XWINES, Timer, fresh_app, percentiles, report, run

from sommelier.catalog.importer import import_catalog
from sommelier.catalog.search import SearchError, SearchFilters, search_wines
from sommelier.catalog.tools import CatalogTools

QUERIES = [
    {"type": "red", "country": "france"},
    {"query": "pinot noir"},
    {"grape": "shiraz", "max_price": 30},
    {"type": "white", "food": "fish", "min_rating": 3.5},
    {"query": "full bodied red for steak"},
    {"type": "sparkling"},
    {"country": "usa", "type": "red", "body": "full"},
    {"query": "riesling germany"},
    {"region": "rioja"},
    {"type": "rose", "max_price": 20},
]


def generated_catalog(path: Path, size: int) -> None:
    """A synthetic catalog in the project's CSV format, with realistic spread."""
    rng = random.Random(7)
    grapes = [
        "Syrah",
        "Merlot",
        "Pinot Noir",
        "Chardonnay",
        "Riesling",
        "Malbec",
        "Tempranillo",
        "Sangiovese",
        "Sauvignon Blanc",
        "Grenache",
        "Nebbiolo",
        "Cabernet Sauvignon",
    ]
    countries = {
        "France": ["Bordeaux", "Burgundy", "Rhône", "Loire"],
        "Italy": ["Tuscany", "Piedmont"],
        "Spain": ["Rioja", "Priorat"],
        "United States": ["Napa Valley"],
        "Germany": ["Mosel"],
        "Australia": ["Barossa Valley"],
        "Chile": ["Maipo"],
    }
    types = ["red", "red", "red", "white", "white", "rosé", "sparkling", "dessert"]
    foods = ["Beef", "Lamb", "Poultry", "Rich Fish", "Shellfish", "Cheese", "Pasta", "Spicy"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "id",
                "name",
                "producer",
                "country",
                "region",
                "grapes",
                "type",
                "body",
                "price",
                "currency",
                "description",
                "food_pairings",
                "rating",
                "rating_count",
            ]
        )
        for i in range(size):
            country = rng.choice(list(countries))
            grape = rng.sample(grapes, rng.randint(1, 3))
            writer.writerow(
                [
                    f"g-{i}",
                    f"{rng.choice(['Clos', 'Domaine', 'Tenuta', 'Bodega'])} {i} {grape[0]}",
                    f"Producer {i % 5000}",
                    country,
                    rng.choice(countries[country]),
                    ";".join(grape),
                    rng.choice(types),
                    rng.choice(["light", "medium", "full"]),
                    round(rng.uniform(6, 300), 2),
                    "EUR",
                    f"Notes of {rng.choice(['cherry', 'plum', 'citrus', 'apple', 'pepper'])} and "
                    f"{rng.choice(['oak', 'stone', 'spice', 'earth'])}.",
                    ";".join(rng.sample(foods, 2)),
                    round(rng.uniform(2.5, 4.8), 2),
                    rng.randint(0, 5000),
                ]
            )


async def search_latency(app, queries: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """As `sommelier catalog search` runs them: a person's words read as filters first, the
    page only (the agent's tools read no counts)."""
    names = await CatalogTools(app.sessions).names()
    samples = []
    for i in range(queries):
        filters = SearchFilters(**QUERIES[i % len(QUERIES)], limit=5)
        async with app.sessions() as session:
            with Timer() as timer, contextlib.suppress(SearchError):
                await search_wines(
                    session, filters, words_as_filters=True, count=False, names=names
                )
        samples.append(timer.seconds * 1000)
    return percentiles(samples)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    kinds = args.databases.split(",")
    wines, ratings = XWINES / "XWines_Slim_1K_wines.csv", XWINES / "XWines_Slim_150K_ratings.csv"
    if not wines.exists():
        print(f"skipped the X-Wines import and search: {XWINES} is not here (it sits beside the")
        print("project as ../shared/data/xwines; the generated catalogs below need nothing)")
        kinds_xwines: list[str] = []
    else:
        kinds_xwines = kinds
    for kind in kinds_xwines:
        async with fresh_app(kind) as app:
            with Timer() as timer:
                result = await import_catalog(app.sessions, [wines, ratings], skip_invalid=True)
            rows = result.wines + result.ratings_upserted
            report(
                f"import X-Wines 1k wines + 150k ratings ({kind})",
                [
                    ("wines", f"{result.wines:,}"),
                    ("ratings", f"{result.ratings_upserted:,}"),
                    ("seconds", f"{timer.seconds:.1f}"),
                    ("rows/s", f"{rows / timer.seconds:,.0f}"),
                ],
            )
            median, p95 = await search_latency(app, args.queries)
            report(
                f"search latency, X-Wines 1k ({kind})",
                [("median ms", f"{median:.2f}"), ("p95 ms", f"{p95:.2f}")],
            )
    for size in [int(s) for s in args.sizes.split(",") if int(s) > 1000]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "generated.csv"
            generated_catalog(path, size)
            for kind in kinds:
                async with fresh_app(kind) as app:
                    with Timer() as timer:
                        await import_catalog(app.sessions, [path])
                    median, p95 = await search_latency(app, args.queries)
                    report(
                        f"search latency, generated {size:,} wines ({kind})",
                        [
                            ("import seconds", f"{timer.seconds:.1f}"),
                            ("median ms", f"{median:.2f}"),
                            ("p95 ms", f"{p95:.2f}"),
                        ],
                    )


if __name__ == "__main__":
    run(main)
