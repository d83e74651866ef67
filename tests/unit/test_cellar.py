"""The cellar (issue 48): files people bring (CellarTracker, Vivino, this project's CSV) read
row by row with bad fields named, bottles matched to the catalog or kept as the person's own,
drink windows from the table or the person, a person's cellar apart from a group's."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import func, select

from sommelier.cellar.files import CellarFileError, CellarRow, read_file, write_csv
from sommelier.cellar.store import (
    READINESS_ORDER,
    Owner,
    add_rows,
    cellar_of,
    held,
    kept_wines,
)
from sommelier.cellar.windows import Readiness, Style, window
from sommelier.db.models import CellarEvent, User, utcnow

DATA = Path(__file__).resolve().parents[1] / "data"
THIS_YEAR = utcnow().year


def cellartracker() -> bytes:
    return (DATA / "cellartracker_my_cellar.csv").read_bytes()


def vivino() -> bytes:
    return (DATA / "vivino_cellar.csv").read_bytes()


# -- files -----------------------------------------------------------------------------------


def test_a_cellartracker_export_is_read_as_its_owner_wrote_it() -> None:
    parsed = read_file(cellartracker(), "My Cellar.csv")
    assert parsed.format == "cellartracker"
    jadot, tempier, moet = parsed.rows
    assert (jadot.name, jadot.quantity, jadot.vintage, jadot.location) == (
        "Louis Jadot Bourgogne Pinot Noir", 2, "2020", "Cellar / A3"
    )  # fmt: skip
    # Windows-1252 "è", a price of 0 is no price, its own drink window kept.
    assert tempier.grapes == ["Mourvèdre"] and tempier.price_paid is None
    assert (tempier.drink_from, tempier.drink_until) == (2024, 2036)
    # 1001 is CellarTracker's "no vintage"; a blend is no grape; "White - Sparkling" is a style.
    assert (moet.vintage, moet.grapes, moet.type) == ("NV", [], "sparkling")
    # Bottles ordered but not delivered (Quantity 0, Pending 6) are not in the cellar yet.
    assert parsed.skipped == ["line 5: no bottle in the cellar (quantity 0)"]


def test_a_vivino_cellar_export_is_read_and_its_scanned_wines_list_is_refused() -> None:
    parsed = read_file(vivino(), "cellar.csv")
    catena, musar = parsed.rows
    assert (musar.vintage, musar.quantity, musar.country) == ("2016", 1, "Lebanon")
    assert (catena.producer, catena.name, catena.quantity, catena.type) == (
        "Catena", "Malbec", 4, "red"
    )  # fmt: skip
    assert (catena.drink_from, catena.drink_until) == (2023, 2030)
    scanned = b"Winery,Wine name,Vintage,Your rating\nCatena,Malbec,2021,4\n"
    # A wine no longer in the cellar (count 0) is no bottle.
    assert parsed.skipped == ["line 4: no bottle in the cellar (quantity 0)"]
    with pytest.raises(CellarFileError, match="the wines you scanned, not your cellar"):
        read_file(scanned, "full_wine_list.csv")


def test_every_bad_field_is_named_by_line_and_column_and_nothing_is_read() -> None:
    text = (
        "name,quantity,vintage,price_paid\n"
        "Catena Malbec,6,2021,17\n"
        "Barolo,six,2019,40\n"
        ",1,2019,\n"
        "Rioja,2,20O5,cheap\n"
    )
    with pytest.raises(CellarFileError) as raised:
        read_file(text.encode(), "mine.csv")
    assert "nothing was imported" in str(raised.value)
    assert [str(e) for e in raised.value.errors] == [
        "mine.csv:3: quantity: 'six' is not a number of bottles",
        "mine.csv:4: name: empty: every bottle needs its wine's name",
        "mine.csv:5: vintage: '20O5' is not a vintage (a year, or NV)",
        "mine.csv:5: price_paid: 'cheap' is not a price",
    ]


def test_a_file_in_no_known_format_says_which_it_reads() -> None:
    with pytest.raises(CellarFileError, match="CellarTracker's export of My Cellar"):
        read_file(b"wine;bottles\nMalbec;2\n", "x.csv")


# -- drink windows ---------------------------------------------------------------------------


def test_a_window_follows_the_grape_the_price_and_the_persons_own_years() -> None:
    barolo = Style("red", "full", "dry", ("Nebbiolo",), 60.0)
    assert window(barolo, 2020).readiness(2026) == Readiness.ready  # ready at 6, best from 10
    assert window(barolo, 2010).readiness(2026) == Readiness.peak
    assert window(barolo, 2024).readiness(2026) == Readiness.too_young
    # The same grape at an everyday price is made to drink young.
    assert window(Style("red", grapes=("Nebbiolo",), price=9.0), 2019).readiness(2026) == "past"
    # The person's (or CellarTracker's) own years win: the middle third is the peak.
    own = window(barolo, 2024, drink_from=2024, drink_until=2030)
    assert own.own and (own.peak_from, own.peak_until) == (2026, 2028)
    assert own.readiness(2026) == Readiness.peak


ORDER = list(Readiness)  # too_young, ready, peak, past


@given(
    kind=st.sampled_from(["red", "white", "rosé", "sparkling", "dessert", "fortified", None]),
    body=st.sampled_from(["light", "medium", "full", None]),
    grapes=st.lists(st.sampled_from(["Nebbiolo", "Riesling", "Gamay", "Syrah", "Xinomavro"])),
    price=st.one_of(st.none(), st.floats(min_value=1, max_value=900)),
    vintage=st.integers(min_value=1950, max_value=THIS_YEAR),
)
def test_a_bottle_never_grows_younger(kind, body, grapes, price, vintage) -> None:  # type: ignore[no-untyped-def]
    """Over the years every bottle goes too young, ready, peak, past, in that order."""
    drink = window(Style(kind, body, None, tuple(grapes), price), vintage)
    states = [ORDER.index(drink.readiness(year)) for year in range(vintage, vintage + 80)]
    assert states == sorted(states) and states[-1] == ORDER.index(Readiness.past)


# -- the store -------------------------------------------------------------------------------


async def _user(session, name: str) -> int:  # type: ignore[no-untyped-def]
    user = User(local_name=name, display_name=name)
    session.add(user)
    await session.flush()
    return user.id


async def test_bottles_are_matched_to_the_catalog_or_kept_as_named(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    async with sqlite_app.sessions() as session:
        ana = await _user(session, "ana")
        cellar = await cellar_of(session, Owner(user_id=ana))
        tracked = read_file(cellartracker(), "My Cellar.csv")
        added = await add_rows(session, cellar, tracked.rows, ana, tracked.format)
        rows = read_file(vivino(), "cellar.csv").rows
        again = await add_rows(session, cellar, rows, ana, "vivino")
        await session.commit()
        found = await held(session, cellar)
        events = await session.scalar(select(func.count()).select_from(CellarEvent))
    assert (added.bottles, added.rows, added.matched) == (6, 3, 2)
    assert (again.bottles, again.matched) == (5, 2)
    by_name = {h.bottle.name: h.bottle for h in found}
    # The catalog's ids and facts where it has the wine ("Malbec" by Catena is its Catena
    # Malbec), the file's for Domaine Tempier, which it lacks.
    assert by_name["Catena Malbec"].wine_id == "sm-059"
    assert by_name["Château Musar"].wine_id == "sm-068"
    assert by_name["Moët & Chandon Impérial Brut"].wine_id == "sm-010"
    tempier = by_name["Domaine Tempier Bandol Rouge"]
    assert tempier.wine_id is None and tempier.grapes == ["Mourvèdre"]
    assert sum(h.bottle.quantity for h in found) == 11 and events == 5
    # At their peak first, then ready, too young and past.
    order = [READINESS_ORDER.index(h.readiness) for h in found]
    assert order == sorted(order)


async def test_the_same_wine_in_the_same_place_adds_up_and_the_export_reads_back(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    async with sqlite_app.sessions() as session:
        ana = await _user(session, "ana")
        cellar = await cellar_of(session, Owner(user_id=ana))
        parsed = read_file(cellartracker(), "My Cellar.csv")
        await add_rows(session, cellar, parsed.rows, ana, parsed.format)
        await add_rows(session, cellar, parsed.rows[:1], ana, parsed.format)  # bought two more
        await session.commit()
        found = await held(session, cellar)
        exported = write_csv([h.bottle for h in found], [str(h.readiness) for h in found])
        bob = await _user(session, "bob")
        copy = await cellar_of(session, Owner(user_id=bob))
        back = read_file(exported.encode(), "export.csv")
        await add_rows(session, copy, back.rows, bob, back.format)
        await session.commit()
        copied = await held(session, copy)
    jadot = next(h.bottle for h in found if h.bottle.wine_id == "sm-004")
    assert jadot.quantity == 4 and len(found) == 3
    assert back.format == "csv"
    assert sorted((b.bottle.name, b.bottle.vintage, b.bottle.quantity, b.bottle.location,
                   b.bottle.drink_until) for b in copied) == sorted(
        (b.bottle.name, b.bottle.vintage, b.bottle.quantity, b.bottle.location,
         b.bottle.drink_until) for b in found
    )  # fmt: skip


async def test_a_groups_cellar_is_its_own_and_a_persons_stays_theirs(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    async with sqlite_app.sessions() as session:
        ana = await _user(session, "ana")
        mine = await cellar_of(session, Owner(user_id=ana))
        group = await cellar_of(session, Owner(chat_id=-100123))
        rows = read_file(vivino(), "cellar.csv").rows
        await add_rows(session, group, rows, ana, "vivino")
        await session.commit()
        assert await held(session, mine) == []
        assert sum(h.bottle.quantity for h in await held(session, group)) == 5
        assert (await cellar_of(session, Owner(chat_id=-100123))).id == group.id
        assert group.user_id is None


async def test_forgetting_a_cellar_deletes_its_bottles_and_history_and_nothing_else(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    from sommelier.cellar.store import bottles_held, forget

    async with sqlite_app.sessions() as session:
        ana, bob = await _user(session, "ana"), await _user(session, "bob")
        rows = read_file(vivino(), "cellar.csv").rows
        for owner in (Owner(user_id=ana), Owner(user_id=bob), Owner(chat_id=-5)):
            await add_rows(session, await cellar_of(session, owner), rows, ana, "vivino")
        await session.commit()
        assert await forget(session, Owner(user_id=ana)) == 5
        await session.commit()
        held_now = [
            await bottles_held(session, o)
            for o in (Owner(user_id=ana), Owner(user_id=bob), Owner(chat_id=-5))
        ]
        events = await session.scalar(select(func.count()).select_from(CellarEvent))
    assert held_now == [0, 5, 5]
    assert events == 4  # two rows each for Bob's and the group's cellars


async def test_a_bottle_without_a_year_is_the_catalogs_vintage_or_ready_when_bought(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    """A non-vintage Champagne or Tawny Port is sold ready to drink: bought this year, it is
    never "too young"; a catalog wine named without a year is of the catalog's vintage."""
    rows = [
        CellarRow(1, "Moët & Chandon Impérial Brut", 3, "Moët & Chandon", "NV"),
        CellarRow(2, "Graham's 10 Year Old Tawny Port", 1, "Graham's"),
        CellarRow(3, "Catena Malbec", 2, "Catena Zapata"),  # the catalog's is a 2021
        CellarRow(4, "Catena Malbec", 1, "Catena Zapata", str(THIS_YEAR)),
    ]
    async with sqlite_app.sessions() as session:
        owner = Owner(user_id=await _user(session, "ana"))
        cellar = await cellar_of(session, owner)
        await add_rows(session, cellar, rows, None, "csv")
        found = {(h.bottle.name, h.bottle.vintage): h for h in await held(session, cellar)}
        kept = await kept_wines(session, owner)
    # What the agent's cellar search reads agrees: by catalog wine, the readiest bottle's.
    assert kept["sm-059"].quantity == 3 and kept["sm-059"].readiness != Readiness.too_young
    assert kept["sm-010"].readiness != Readiness.too_young
    assert found[("Moët & Chandon Impérial Brut", "NV")].readiness != Readiness.too_young
    assert found[("Graham's 10 Year Old Tawny Port", None)].readiness != Readiness.too_young
    assert found[("Catena Malbec", None)].window.ready < THIS_YEAR
    assert found[("Catena Malbec", str(THIS_YEAR))].readiness == Readiness.too_young


def test_a_rose_or_a_sparkling_wine_ages_as_its_style_not_as_its_grapes_red() -> None:
    syrah_rose = Style(type="rosé", body="light", grapes=("Grenache", "Syrah"), price=17)
    champagne = Style(type="sparkling", grapes=("Chardonnay", "Pinot Noir"), price=45)
    syrah = Style(type="red", body="full", grapes=("Syrah",), price=40)
    assert window(syrah_rose, THIS_YEAR - 1).readiness(THIS_YEAR) == Readiness.peak
    assert window(champagne, THIS_YEAR - 1).readiness(THIS_YEAR) == Readiness.peak
    assert window(syrah, THIS_YEAR - 1).readiness(THIS_YEAR) == Readiness.too_young
