"""Label photos: top-1 and top-3 accuracy, confident matches for wines the catalog lacks, and
seconds per photo, with the real OCR model (the vision extra) on labels drawn with Pillow from
the starter catalog's wines (each in a font, paper, tilt and blur of its own) plus ten made-up
wines and ten other wines of the catalog's producers. `--index-size N` also times the label
index alone on N synthetic wines.

.venv/bin/python bench/label_bench.py [--index-size 100000]
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from common import Timer, fresh_app, percentiles, report, run  # noqa: E402

from sommelier.catalog.label_index import LabelIndex, LabelWine  # noqa: E402
from sommelier.catalog.starter import load_starter_catalog_if_empty  # noqa: E402
from sommelier.vision.photos import PhotoReader  # noqa: E402
from tests.support.label_images import render_label  # noqa: E402

NOT_IN_CATALOG = [
    ["Bodega Luna Roja", "Rioja Reserva", "2019"],
    ["Weingut Sonnenhang", "Riesling Trocken", "2021"],
    ["Domaine des Trois Chênes", "Bourgogne Pinot Noir", "2020"],
    ["Tenuta Il Poggiolo", "Chianti Classico", "2018"],
    ["Quinta da Serra Alta", "Douro Tinto", "2017"],
    ["Maison Fleury-Lavigne", "Champagne Brut", "NV"],
    ["Blackstone Ridge", "Napa Valley Cabernet", "2016"],
    ["Kiwi Hollow", "Marlborough Sauvignon Blanc", "2023"],
    ["Finca Los Andes Altos", "Mendoza Malbec", "2020"],
    ["Château Belle-Rive", "Bordeaux Supérieur", "2019"],
]

# Written for this benchmark alone (the list above shares three labels with the unit tests):
# other wines of producers the catalog has, which must not be taken for the catalog's wine.
SIBLINGS = [
    ["Penfolds", "Bin 389 Cabernet Shiraz", "South Australia 2019"],
    ["Trimbach", "Pinot Gris Réserve", "Alsace 2020"],
    ["Cloudy Bay", "Pinot Noir", "Marlborough 2021"],
    ["Villa Maria", "Cellar Selection Merlot", "Hawke's Bay 2018"],
    ["Louis Jadot", "Pouilly-Fuissé", "2021"],
    ["Marqués de Riscal", "Rueda Verdejo", "2022"],
    ["Guigal", "Condrieu La Doriane", "2019"],
    ["Masi", "Campofiorin", "Rosso del Veronese 2018"],
    ["Torres", "Sangre de Toro", "Catalunya 2021"],
    ["Kendall-Jackson", "Vintner's Reserve Pinot Noir", "California 2020"],
]


def starter_labels() -> list[tuple[str, list[str]]]:
    """(wine id, the label's lines): producer, the name when it says more, region and vintage."""
    path = resources.files("sommelier.catalog").joinpath("data/starter_wines.csv")
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    labels = []
    for row in rows:
        lines = [row["producer"]]
        if row["name"] != row["producer"]:
            lines.append(row["name"].replace(row["producer"], "").strip() or row["name"])
        lines.append(f"{row['region']} {row['vintage']}".strip())
        labels.append((row["id"], lines))
    return labels


async def accuracy() -> None:
    async with fresh_app("sqlite") as app:
        await load_starter_catalog_if_empty(app.sessions)
        reader = PhotoReader(app.sessions)
        await reader.catalog.label_index()
        top1 = top3 = sure_right = 0
        seconds: list[float] = []
        labels = starter_labels()
        for seed, (wine_id, lines) in enumerate(labels):
            photo = render_label(lines, seed=seed)
            with Timer() as timer:
                found = await reader.recognise(photo)
            seconds.append(timer.seconds)
            ids = [m.wine_id for m in found.matches]
            top1 += ids[:1] == [wine_id]
            top3 += wine_id in ids[:3]
            sure_right += found.sure and ids[:1] == [wine_id]
            if ids[:1] != [wine_id]:
                print(f"  missed {wine_id} {lines}: read {found.text}, got {found.matches[:2]}")
        confident_wrong = await _confident(reader, NOT_IN_CATALOG)
        siblings_wrong = await _confident(reader, SIBLINGS)
        median, p95 = percentiles(seconds)
        n = len(labels)
        report(
            f"label photos: {n} catalog wines, {len(NOT_IN_CATALOG)} not in the catalog",
            [
                ("top-1", f"{top1}/{n} = {100 * top1 / n:.1f} %"),
                ("top-3", f"{top3}/{n} = {100 * top3 / n:.1f} %"),
                ("sure and right", f"{sure_right}/{n}"),
                ("confident matches, not in catalog", f"{confident_wrong}/{len(NOT_IN_CATALOG)}"),
                (
                    "confident, another wine of a catalog producer",
                    f"{siblings_wrong}/{len(SIBLINGS)}",
                ),
                ("seconds per photo, median / p95", f"{median:.2f} / {p95:.2f}"),
            ],
        )


async def _confident(reader: PhotoReader, labels: list[list[str]]) -> int:
    """How many of these labels (none a catalog wine) were taken for a catalog wine."""
    wrong = 0
    for seed, lines in enumerate(labels):
        found = await reader.recognise(render_label(lines, seed=seed))
        wrong += found.sure
        if found.sure:
            print(f"  confident for a wine not in the catalog: {lines} -> {found.matches[0]}")
    return wrong


def synthetic_wines(size: int) -> list[LabelWine]:
    """Wines with made-up producers and names from syllables: a vocabulary as varied as a
    real catalog's (the generated catalogs of catalog_bench.py reuse a handful of words)."""
    rng = random.Random(11)
    syllables = ["va", "lo", "rin", "tre", "sa", "luz", "mon", "te", "ca", "stel", "bri", "do"]
    kinds = ["Domaine", "Bodega", "Tenuta", "Weingut", "Quinta", "Estate", "Château"]
    grapes = ["Merlot", "Syrah", "Riesling", "Malbec", "Pinot Noir", "Chardonnay", "Tempranillo"]

    def word() -> str:
        return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).title()

    return [
        LabelWine(
            f"s-{i}",
            f"{word()} {rng.choice(grapes)}",
            f"{rng.choice(kinds)} {word()}",
            word(),
            str(rng.randint(2005, 2023)),
        )
        for i in range(size)
    ]


def index_at(size: int) -> None:
    wines = synthetic_wines(size)
    with Timer() as build:
        index = LabelIndex(wines)
    samples, right = [], 0
    for wine in wines[:: max(1, size // 50)][:50]:
        started = time.perf_counter()
        found = index.recognise([wine.producer or "", wine.name, wine.vintage or ""])
        samples.append(time.perf_counter() - started)
        right += bool(found.matches) and found.matches[0].wine_id == wine.wine_id
    median, p95 = percentiles(samples)
    report(
        f"label index on {size:,} synthetic wines (text as OCR would read it, no photo)",
        [
            ("build seconds", f"{build.seconds:.1f}"),
            ("match ms, median / p95", f"{1000 * median:.1f} / {1000 * p95:.1f}"),
            ("top-1", f"{right}/{len(samples)}"),
        ],
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index-size", type=int, default=0)
    args = parser.parse_args()
    await accuracy()
    if args.index_size:
        index_at(args.index_size)


if __name__ == "__main__":
    run(main)
