"""Catalog import: every format, bad rows, idempotency, all-or-nothing."""

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from sommelier.catalog.formats import CatalogFileError
from sommelier.catalog.importer import CatalogImportError, import_catalog
from sommelier.db.models import Wine, WineRating
from tests.conftest import XWINES

OWN_CSV = """id,name,producer,country,region,grapes,type,sweetness,body,acidity,abv,vintage,price,currency,description,food_pairings,rating,rating_count
t-1,Côte Rôtie,Guigal,France,Rhône,Syrah;Viognier,red,dry,full-bodied,medium,13.5,2018,80,eur,"Smoky, peppery",Lamb;Beef,4.4,100
t-2,Rosé de Provence,Minuty,France,Provence,Grenache,Rosé,,light,,12.5,N.V.,15,EUR,,Appetizer,,
"""


async def count(app, model) -> int:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return await session.scalar(select(func.count()).select_from(model)) or 0


async def wine(app, external_id: str) -> Wine:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return (await session.scalars(select(Wine).filter_by(external_id=external_id))).one()


async def test_own_csv_format(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "wines.csv"
    path.write_text(OWN_CSV, encoding="utf-8")
    report = await import_catalog(empty_app.sessions, [path])
    assert (report.wines_inserted, report.wines_updated) == (2, 0)
    cote = await wine(empty_app, "t-1")
    assert cote.grapes == ["Syrah", "Viognier"]
    assert cote.body == "full" and cote.currency == "EUR" and cote.price == 80
    assert cote.food_pairings == ["Lamb", "Beef"] and cote.rating_avg == 4.4
    rose = await wine(empty_app, "t-2")
    assert rose.type == "rosé" and rose.vintage == "NV" and rose.rating_avg is None


async def test_own_json_format(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "wines.json"
    wines = [
        {"id": "j-1", "name": "Barolo", "type": "red", "country": "Italy", "grapes": ["Nebbiolo"]},
        {"id": "j-2", "name": "Cava", "type": "sparkling", "price": 9.5, "currency": "EUR"},
    ]
    path.write_text(json.dumps({"wines": wines}, indent=2), encoding="utf-8")
    report = await import_catalog(empty_app.sessions, [path])
    assert report.wines_inserted == 2
    assert (await wine(empty_app, "j-1")).grapes == ["Nebbiolo"]


async def test_xwines_wines_and_ratings_fold_into_averages(empty_app) -> None:  # type: ignore[no-untyped-def]
    wines = XWINES / "XWines_Test_100_wines.csv"
    ratings = XWINES / "XWines_Test_3K_ratings.csv"
    # Named in the "wrong" order on purpose: wines are always written first.
    report = await import_catalog(empty_app.sessions, [ratings, wines], skip_invalid=True)
    assert report.wines_inserted == 100
    assert await count(empty_app, WineRating) == report.ratings_upserted > 0
    async with empty_app.sessions() as session:
        rated = (await session.scalars(select(Wine).where(Wine.rating_count > 0))).all()
        some = rated[0]
        avg = await session.scalar(
            select(func.avg(WineRating.rating)).where(WineRating.wine_id == some.id)
        )
        n = await session.scalar(
            select(func.count()).select_from(WineRating).where(WineRating.wine_id == some.id)
        )
    assert some.rating_count == n and some.rating_avg == pytest.approx(avg, abs=0.01)
    # Every rating whose wine is not in the 100-wine file was reported, with its line.
    assert all(e.field == "WineID" and e.line > 1 for e in report.skipped)
    first = await wine(empty_app, "xw-100062")
    assert first.type == "red" and first.grapes == ["Merlot"] and "Pizza" in first.food_pairings
    assert first.country == "Brazil" and first.region == "Vale dos Vinhedos"
    assert first.vintage == "2020" and first.body == "full" and first.acidity == "medium"
    assert first.producer == "Casa Valduga" and first.price is None


async def test_reimport_updates_and_never_duplicates(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wines = XWINES / "XWines_Test_100_wines.csv"
    await import_catalog(empty_app.sessions, [wines])
    report = await import_catalog(empty_app.sessions, [wines])
    assert (report.wines_inserted, report.wines_updated) == (0, 100)
    assert await count(empty_app, Wine) == 100
    path = tmp_path / "wines.csv"
    path.write_text(OWN_CSV, encoding="utf-8")
    await import_catalog(empty_app.sessions, [path])
    path.write_text(OWN_CSV.replace(",80,eur", ",85,eur"), encoding="utf-8")
    await import_catalog(empty_app.sessions, [path])
    assert (await wine(empty_app, "t-1")).price == 85
    assert await count(empty_app, Wine) == 102


async def test_bad_rows_abort_with_nothing_written(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "wines.csv"
    bad = OWN_CSV + "t-3,Mystery,,,,,purple,,,,,,,,,,,\nt-4,Cheap,,,,,red,,,,,,-5,,,,,\n"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(CatalogImportError) as caught:
        await import_catalog(empty_app.sessions, [path])
    errors = {(e.line, e.field) for e in caught.value.errors}
    assert errors == {(4, "type"), (5, "price")}
    assert "purple" in str(caught.value.errors[0])
    assert await count(empty_app, Wine) == 0


async def test_skip_invalid_imports_the_rest_and_lists_skipped(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "wines.csv"
    path.write_text(OWN_CSV + "t-3,Mystery,,,,,purple,,,,,,,,,,,\n", encoding="utf-8")
    report = await import_catalog(empty_app.sessions, [path], skip_invalid=True)
    assert report.wines_inserted == 2
    assert [(e.line, e.field) for e in report.skipped] == [(4, "type")]


async def test_xwines_bad_list_literal_names_line_and_field(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = (XWINES / "XWines_Test_100_wines.csv").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("['", "[", 1)
    path = tmp_path / "xw.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CatalogImportError) as caught:
        await import_catalog(empty_app.sessions, [path])
    assert [(e.line, e.field) for e in caught.value.errors] == [(4, "Grapes")]


async def test_file_level_problems_are_clear(empty_app, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("id,name,type\nx,Ros\xe9,ros\xe9\n".encode("latin-1"))
    with pytest.raises(CatalogFileError, match=r"not UTF-8 text .*line 2"):
        await import_catalog(empty_app.sessions, [latin1])
    missing = tmp_path / "missing.csv"
    missing.write_text("id,producer\nx,y\n", encoding="utf-8")
    with pytest.raises(CatalogFileError, match=r"missing column\(s\): name, type"):
        await import_catalog(empty_app.sessions, [missing])
    with pytest.raises(CatalogFileError, match="no such file"):
        await import_catalog(empty_app.sessions, [tmp_path / "nope.csv"])
    assert await count(empty_app, Wine) == 0
