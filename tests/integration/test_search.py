"""Catalog search on the starter catalog: filters, aliases, ranking, bad input (both databases)."""

import json

import pytest

from sommelier.catalog.importer import import_catalog
from sommelier.catalog.search import SearchError, SearchFilters, search_wines
from sommelier.catalog.tools import relaxed_search
from tests.conftest import XWINES


async def search(app, **filters):  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return await search_wines(session, SearchFilters(**filters))


async def test_type_and_country_filters(app) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, type="red", country="france", limit=20)
    assert result.total == 9
    assert all(w.style.startswith("red") and w.region.endswith("France") for w in result.wines)
    # Without free text, the best rated come first.
    ratings = [w.rating for w in result.wines]
    assert ratings == sorted(ratings, reverse=True)


async def test_several_styles_are_any_of_them(app) -> None:  # type: ignore[no-untyped-def]
    """ "A dessert wine, something like a Port": either style, nothing else."""
    either = await search(app, types=["dessert", "fortified"], limit=20)
    fortified = await search(app, type="fortified", limit=20)
    assert fortified.total and either.total > fortified.total
    assert {w.style.split(",")[0] for w in either.wines} == {"dessert", "fortified"}


async def test_a_dessert_wine_is_any_sweet_one_a_sweet_port_too(app) -> None:  # type: ignore[no-untyped-def]
    """ "Um vinho doce … até 30 euros": a sweet Port is a dessert wine to the person, and the
    dry Sherry is not."""
    dessert = await search(app, type="dessert", max_price=30, limit=20)
    styles = {w.style for w in dessert.wines}
    assert dessert.wines and all("sweet" in s for s in styles)
    assert any(s.startswith("fortified") for s in styles)


@pytest.mark.parametrize(
    ("filters", "expected_id"),
    [
        ({"type": "rose"}, "sm-017"),  # "rose" finds Rosé
        ({"type": "ROSÉ"}, "sm-017"),
        ({"country": "USA", "grape": "cabernet"}, "sm-047"),  # USA finds United States
        ({"grape": "syrah", "country": "australia"}, "sm-051"),  # syrah finds Shiraz
        ({"grape": "Shiraz", "country": "france"}, "sm-008"),  # and Shiraz finds Syrah
        ({"grape": "garnacha", "country": "spain"}, "sm-036"),
        ({"region": "cotes du rhone"}, "sm-006"),  # accents forgiven
        ({"query": "gewurztraminer"}, "sm-016"),
        ({"food": "steak", "country": "argentina"}, "sm-058"),  # steak pairs as beef
    ],
)
async def test_aliases_accents_and_case(app, filters, expected_id) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, **filters)
    assert expected_id in [w.id for w in result.wines]


async def test_price_range_and_min_rating(app) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, type="red", max_price=20, min_rating=3.8, limit=20)
    assert result.total > 0
    for wine in result.wines:
        assert float(wine.price.split()[0]) <= 20 and wine.rating >= 3.8


async def test_sweetness_and_body(app) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, sweetness="off dry", body="light")
    assert {w.id for w in result.wines} >= {"sm-044"}
    assert all("off-dry" in w.style and "light body" in w.style for w in result.wines)


async def test_free_text_is_ranked_by_relevance(app) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, query="pinot noir oregon")
    assert result.wines[0].id == "sm-050"  # matches all three words
    assert result.total >= 4  # every Pinot Noir still matches


async def test_results_are_compact(app) -> None:  # type: ignore[no-untyped-def]
    result = await search(app, type="red", limit=10)
    for wine in result.wines:
        assert len(json.dumps(wine.model_dump(), ensure_ascii=False)) < 500
    assert result.total > len(result.wines)


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({}, "give a query or at least one filter"),
        ({"type": "purple"}, "unknown type 'purple'; use one of: red, white, rosé"),
        ({"body": "huge"}, "unknown body"),
        ({"country": "Narnia"}, "no wines from 'Narnia' in the catalog; countries: Argentina"),
        ({"min_price": 50, "max_price": 10}, "price range is upside down"),
        ({"query": "the a of"}, "has no words to search for"),
    ],
)
async def test_bad_searches_get_clear_messages(app, filters, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SearchError, match=message.replace("(", r"\(")):
        await search(app, **filters)


async def test_search_over_xwines(empty_app) -> None:  # type: ignore[no-untyped-def]
    await import_catalog(
        empty_app.sessions,
        [XWINES / "XWines_Test_100_wines.csv", XWINES / "XWines_Test_3K_ratings.csv"],
        skip_invalid=True,
    )
    result = await search(empty_app, query="Rosé", country="france")
    assert result.total > 0 and all("France" in w.region for w in result.wines)
    brazil = await search(empty_app, query="serra gaucha")
    assert any("Serra Gaúcha" in w.region for w in brazil.wines)


async def test_a_persons_own_words_become_filters_when_asked(app) -> None:  # type: ignore[no-untyped-def]
    filters = SearchFilters(query="full bodied red for steak", limit=20)
    async with app.sessions() as session:
        as_words = await search_wines(session, filters, words_as_filters=True)
        as_text = await search_wines(session, filters)
    assert as_words.wines and all(w.style.startswith("red") for w in as_words.wines)
    assert all("full body" in w.style for w in as_words.wines)
    # As free text (the agent's leftovers), the same words only rank: a white can still show.
    assert as_text.total > as_words.total


async def test_every_word_first_then_any_word(app) -> None:  # type: ignore[no-untyped-def]
    exact = await search(app, query="oregon pinot", limit=1)
    assert exact.wines[0].id == "sm-050" and exact.total == 1  # the page is full: AND stands
    wider = await search(app, query="oregon pinot", limit=5)
    assert wider.wines[0].id == "sm-050" and wider.total > 1  # not full: any word, ranked


async def test_a_refused_appellation_leaves_out_its_region_only(app) -> None:  # type: ignore[no-untyped-def]
    """ "Something bubbly that isn't Champagne": sparkling wines, none from Champagne."""
    result = await search(app, type="sparkling", exclude_regions=["champagne"], limit=20)
    everything = await search(app, type="sparkling", limit=20)
    regions = {w.region.split(",")[0] for w in result.wines}
    assert "Champagne" not in regions and {"Cava", "Veneto"} <= regions
    assert result.total == everything.total - 3


async def test_a_sweet_white_nobody_makes_finds_a_dessert_wine_first(app) -> None:  # type: ignore[no-untyped-def]
    """No sweet white in the catalog: the sweetness is kept and the style moves to the nearest
    sweet one, and the reply is told the style was given up."""
    async with app.sessions() as session:
        result, relaxed, used = await relaxed_search(
            session, SearchFilters(type="white", sweetness="sweet")
        )
    assert relaxed == {"type": "white"}
    assert used.type == "dessert"
    assert result.wines and all("sweet" in w.style for w in result.wines)


async def test_the_models_guesses_are_given_up_one_at_a_time_the_dish_last(app) -> None:  # type: ignore[no-untyped-def]
    """The plan read "cheese" from チーズ and made up a sparkling wine beside it: nothing is
    both, and the made-up style goes first, so the wines still go with cheese (given up all
    at once, the search fell back to the catalog's best-rated reds)."""
    guesses = SearchFilters(type="sparkling", food="cheese", guessed=["type", "food"])
    async with app.sessions() as session:
        result, relaxed, used = await relaxed_search(session, guesses)
    assert relaxed == {}  # guesses are not reported as wishes given up
    assert used.food == "cheese" and used.type is None
    pairings = [[f.lower() for f in row.food_pairings] for row in result.rows]
    assert pairings and all("cheese" in foods for foods in pairings)


async def test_with_nothing_to_match_the_house_picks_are_dry_table_wines_of_medium_weight(
    app,
) -> None:  # type: ignore[no-untyped-def]
    """A dish no list knows and a plan with nothing usable: by rating alone the fallback was an
    Amarone, a Zinfandel and a Tokaji for borscht, pierogi and Adana kebap alike. Now the dry
    still wines of light or medium body at everyday prices come first (with sparkling among
    them, a Champagne and a Franciacorta came back for borscht, mantı and tochitură: unseen50)."""
    nothing = SearchFilters(query="zzzqqq kapustą", guessed=[])
    async with app.sessions() as session:
        result, _, used = await relaxed_search(session, nothing)
    assert used.query is None and result.rows
    for row in result.rows:
        assert row.type in ("red", "white", "rosé")
        assert row.sweetness in ("dry", "off-dry") and row.body in ("light", "medium")
        assert 8 <= (row.price or 0) <= 60


async def test_beside_a_wine_for_the_table_a_sweet_one_is_not_offered(app) -> None:  # type: ignore[no-untyped-def]
    """unseen52: "a Sauvignon Blanc for goat cheese salad" showed a Sauternes (a Sauvignon
    blend that goes with cheese) beside the Sancerre. For a grape or a savoury dish, a sweet
    wine is offered only when nothing for the table matches, or when sweet is asked for."""
    sauvignon = await search(app, grape="sauvignon blanc", food="cheese", order="everyday")
    assert sauvignon.wines and all(w.style.startswith("white") for w in sauvignon.wines)
    # A dry Fino stays with shellfish; cheese alone keeps its Ports and its Sauternes.
    shellfish = await search(app, food="shellfish", limit=20)
    assert "Lustau Puerto Fino Sherry" in [w.name for w in shellfish.wines]
    cheese = await search(app, food="cheese", limit=20)
    assert any(w.style.startswith("dessert") for w in cheese.wines)
    # Asked for sweet, or with nothing for the table beside it, the Sauternes stays.
    sweet = await search(app, grape="sauvignon blanc", sweetness="sweet", order="everyday")
    assert sweet.wines[0].style.startswith("dessert")
    alone = await search(app, grape="semillon", food="cheese", order="everyday")
    assert [w.name for w in alone.wines] == ["Château d'Yquem Sauternes"]


async def test_a_broader_region_finds_the_catalog_regions_in_it(app) -> None:  # type: ignore[no-untyped-def]
    """unseen56: "un blanc de la Loire" was not read (the catalog says Sancerre), and an
    Albariño and a Vinho Verde came with nothing said of the Loire."""
    loire = await search(app, type="white", region="loire", limit=10)
    assert loire.wines and all(w.region.startswith("Sancerre") for w in loire.wines)
    rhone = await search(app, type="red", region="rhone", limit=10)
    assert {w.region.split(",")[0] for w in rhone.wines} >= {"Châteauneuf-du-Pape"}
