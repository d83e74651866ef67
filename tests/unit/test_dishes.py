"""What a dish is made of, read from the food table (catalog/dishes.py), and what the search
then looks for: the dish's food, not the colour or the meat a plan guessed."""

import pytest
from sqlalchemy import select

from sommelier.catalog.dishes import named
from sommelier.catalog.lexicon import fold
from sommelier.db.models import Wine
from tests.support.chat import ANA, planner, tool_arguments
from tests.support.scripted import ScriptedModel, from_results, plan


def food_named(folded: str, language: str) -> str | None:
    found = named(folded, language)
    return str(found.value) if found is not None else None


@pytest.mark.parametrize(
    ("said", "language", "food"),
    [
        # Home dishes whose names say nothing of their meat, in any language.
        ("Hachee met rode kool, welke wijn schenk ik?", "nl", "beef"),
        ("Hvilken vin passer til fårikål?", "nb", "lamb"),
        ("Sop buntut enaknya minum wine apa?", "id", "beef"),
        ("Quel vin avec une quiche lorraine ?", "fr", "pork"),
        # With the endings a language writes on: case, particles, a preposition written on.
        ("Kaj vino k pljeskavici?", "hr", "beef"),
        ("Mikä viini sopii lohikeiton kanssa?", "fi", "fish"),
        ("Pörköltet főzök, milyen bor illik hozzá?", "hu", "beef"),
        ("닭갈비에 어울리는 와인 알려줘", "ko", "poultry"),
        ("איזה יין מתאים לשקשוקה?", "he", "vegetarian"),
        ("ما النبيذ المناسب مع الدجاج المشوي؟", "ar", "poultry"),
        # A food word right after a dish names what it is made of: a goat satay.
        ("Sate kambing cocoknya wine apa?", "id", "lamb"),
        ("Sate ayam cocoknya wine apa?", "id", "poultry"),
        # Words for a food in a language with no word list of its own; the first named decides.
        ("Vilket vin passar till lax med dillpotatis?", "sv", "rich fish"),
        ("Jakie wino do pierogów z kapustą i grzybami?", "pl", "mushrooms"),
        ("แกงเขียวหวานไก่ ควรดื่มไวน์อะไร", "th", "poultry"),
        # Folded, Thai "กุ้ง" (shrimp) is "กง", which stands in "แกง" (curry): too short to read.
        ("แกงมัสมั่นเนื้อ ควรดื่มไวน์อะไร", "th", "beef"),
        ("ต้มยำกุ้งกับไวน์อะไรดี", "th", "shellfish"),
        ("Hvilken vin passer til smørrebrød med sild og æg?", "da", "fish"),
        # Nothing to read: no dish, or another language's word for a food.
        ("A red wine for tonight, and a white one", "en", None),
        ("I'd like a bottle for my satellite launch party", "en", None),
        ("Un vin rouge, pas trop cher, pour ce soir", "fr", None),
        ("Ein trockener Weißwein unter 20 Euro, bitte", "de", None),
        ("Ett vitt vin, tack", "sv", None),
    ],
)
def test_a_dish_or_a_food_word_names_the_catalogs_food(
    said: str, language: str, food: str | None
) -> None:
    assert food_named(fold(said), language) == food


def test_a_short_food_word_of_one_language_is_not_read_in_another() -> None:
    """Swedish "ost" is a cheese and Polish "ser" too; in German and Spanish they are other
    words ("Ost" is east, "ser" to be)."""
    assert food_named(fold("Vilket vin till ost?"), "sv") == "cheese"
    assert food_named(fold("Jakie wino do sera? Ser pleśniowy."), "pl") == "cheese"
    assert food_named(fold("Ein Wein aus dem Ost-Harz"), "de") is None
    assert food_named(fold("Puede ser un tinto"), "es") is None


async def test_the_dish_chooses_the_food_and_the_colour_is_not_guessed(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """unseen52: the plan guessed a white for fish with fårikål (lamb and cabbage) and two
    Rieslings came back. The dish's food is searched, and the colour left to its pairings."""
    model = ScriptedModel(
        [plan("search_wines", {"type": "white", "food": "fish"}), from_results(count=2)]
    )
    result = await planner(sqlite_app, model).turn(ANA, "Hvilken vin passer til fårikål?")
    ran = tool_arguments(model.requests[-1])[-1]
    assert ran["food"] == "lamb" and "type" not in ran
    async with sqlite_app.sessions() as session:
        rows = {w.external_id: w for w in (await session.scalars(select(Wine))).all()}
    assert result.ok and result.cards
    assert all("Lamb" in rows[c.wine_id].food_pairings for c in result.cards)


async def test_a_food_only_the_plan_wrote_is_not_searched_for(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """unseen54: for dishes no list knows the 1.5B plan wrote a food, and it was wrong every
    time (a dessert and its Tawny Port for draadjesvlees, a beef stew; poultry and a Champagne
    for stuffed cabbage). With no food read, the house's dry table wines come, and no reason
    names a food."""
    model = ScriptedModel(
        [plan("search_wines", {"type": "dessert", "food": "dessert"}), from_results(count=2)]
    )
    result = await planner(sqlite_app, model).turn(ANA, "Wat drink je bij draadjesvlees?")
    ran = tool_arguments(model.requests[-1])[-1]
    assert "food" not in ran and "type" not in ran
    async with sqlite_app.sessions() as session:
        rows = {w.external_id: w for w in (await session.scalars(select(Wine))).all()}
    assert result.ok and result.cards
    assert all(rows[c.wine_id].type in ("red", "white", "rosé") for c in result.cards)
    assert not any("classic match" in c.why.lower() for c in result.cards)


def test_a_dish_whose_name_holds_the_lists_food_is_that_dish() -> None:
    """unseen54: the German list read the "Spätzle" of "Käsespätzle" as pasta, and two Tuscan
    reds came. The whole dish's name is cheese; a dish beside another food leaves it alone."""
    from sommelier.catalog.reading import read
    from sommelier.catalog.tool_arguments import dished

    assert dished(read("Was trinkt man zu Käsespätzle?")).filters["food"] == "cheese"
    assert dished(read("Spätzle mit Rinderbraten, welcher Wein?")).filters["food"] == "pasta"
    assert dished(read("A red for steak")).filters["food"] == "beef"


async def test_beside_a_dish_the_words_read_the_plans_free_text_is_left_out(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """unseen55: the plan's query beside a dish restricted the search to its text ("per__guest
    wine" beside fried salmon left a Dom Pérignon alone); the dish's pairings choose."""
    model = ScriptedModel(
        [plan("search_wines", {"query": "sparkling wine", "food": "soup"}), from_results(count=2)]
    )
    result = await planner(sqlite_app, model).turn(ANA, "Halászléhez milyen bor illik?")
    ran = tool_arguments(model.requests[-1])[-1]
    assert ran["food"] == "fish" and "query" not in ran
    assert result.ok and len(result.cards) == 2  # the fish wines, not the text's one match


def test_a_place_right_after_a_dish_is_its_style_not_a_wish() -> None:
    """unseen55: "tochitură moldovenească" (a Moldavian-style pork stew) brought the notice
    "nothing red from Moldova"; a wine from Moldova asked for elsewhere stays a wish."""
    from sommelier.catalog.reading import read
    from sommelier.catalog.tool_arguments import dished

    styled = dished(read("Ce vin roșu recomanzi la tochitură moldovenească?"))
    assert styled.filters["food"] == "pork" and "country" not in styled.filters
    asked = dished(read("Un vin roșu din Moldova la tochitură"))
    assert asked.filters["country"] == "moldova"
