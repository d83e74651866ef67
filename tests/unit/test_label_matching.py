"""The text read off a photo matched to the catalog (catalog/label_index.py): OCR's misread letters,
close siblings (two Catena Malbecs), wines the catalog lacks, and wine lists."""

from __future__ import annotations

import csv
from importlib import resources

import pytest

from sommelier.catalog.label_index import LabelIndex, LabelWine, worth_asking


@pytest.fixture(scope="module")
def index() -> LabelIndex:
    path = resources.files("sommelier.catalog").joinpath("data/starter_wines.csv")
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return LabelIndex(
        LabelWine(r["id"], r["name"], r["producer"], r["region"], r["vintage"]) for r in rows
    )


@pytest.mark.parametrize(
    ("lines", "wine_id"),
    [
        (["CHATEAU MARGAUX", "Margaux", "2015"], "sm-001"),
        (["CHATEAU LYNCH-BAGFS", "PAUILLAC", "2018"], "sm-002"),  # a letter misread
        (["Catena Zapata", "Catena Malbec", "2021"], "sm-059"),  # not its sibling sm-058
        (["Catena Zapata", "Malbec Argentino", "2019"], "sm-058"),
        (["MARQUES DE RISCAL", "RESERVA", "RIOJA", "2018"], "sm-032"),
        (["Dr. Loosen", "Blue Slate", "Riesling Kabinett"], "sm-044"),
        (["Moet & Chandon", "Dom Perignon", "Brut 2013"], "sm-012"),
    ],
)
def test_a_label_is_its_catalog_wine(index: LabelIndex, lines: list[str], wine_id: str) -> None:
    found = index.recognise(lines)
    assert found.matches[0].wine_id == wine_id, found.matches
    assert found.sure and not found.is_list


@pytest.mark.parametrize(
    "lines",
    [
        ["Bodega Luna Roja", "Rioja Reserva", "2019"],  # the region of catalog wines, not them
        ["Weingut Sonnenhang", "Riesling Trocken", "2021"],
        ["Domaine des Trois Chênes", "Bourgogne Pinot Noir"],
        ["Happy birthday Anna!"],
    ],
)
def test_a_wine_the_catalog_lacks_is_never_a_sure_match(
    index: LabelIndex, lines: list[str]
) -> None:
    found = index.recognise(lines)
    assert not found.sure, found.matches


def test_a_close_call_offers_the_candidates_to_choose_from(index: LabelIndex) -> None:
    found = index.recognise(["Catena", "Malbec"])  # which of the two Catena Malbecs?
    assert not found.sure
    assert [m.wine_id for m in worth_asking(found.matches)] == ["sm-059", "sm-058"]


def test_a_wine_list_is_each_wine_on_it(index: LabelIndex) -> None:
    lines = [
        "WINE LIST",
        "Cloudy Bay Sauvignon Blanc 2023   58",
        "Kanonkop Pinotage 2019   64",
        "Chateau Musar 2016   95",
        "House red by the glass   7",
    ]
    found = index.recognise(lines)
    assert found.is_list
    assert [m.wine_id for m in found.listed] == ["sm-055", "sm-062", "sm-068"]
