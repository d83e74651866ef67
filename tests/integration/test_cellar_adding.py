"""Bottles a person says they have (issue 48, item 2: by message). The words that say so never
settle a search alone, so the plan decides; a plan that adds them gets a proposal from data
(the catalog's match, or candidates, or the wine as named) and no answer call; a plan that
adds with nothing said of having is a search (`cellar_add_unsaid`); nothing is stored in the
cellar by the turn itself."""

from __future__ import annotations

import csv
from importlib import resources

import pytest
from sqlalchemy import func, select

from sommelier.agent.turn import PlannedStep, TurnInput
from sommelier.catalog.label_index import LabelIndex, LabelWine
from sommelier.catalog.reading import read
from sommelier.catalog.tool_arguments import READING
from sommelier.cellar.adding import NAME, AddArgs, Adding, candidates, offered
from sommelier.chat import gist
from sommelier.db.models import CellarBottle
from tests.support.chat import ANA, model_calls, native, planner, stored_messages
from tests.support.scripted import ScriptedModel, answer, plan, reply, tools

BOUGHT = "I bought 6 bottles of Catena Malbec 2019, they're in rack B"
CATENA = {"wine": "Catena Malbec", "bottles": 6, "vintage": 2019, "place": "rack B"}


def starter_index() -> LabelIndex:
    path = resources.files("sommelier.catalog").joinpath("data/starter_wines.csv")
    rows = csv.DictReader(path.read_text("utf-8").splitlines())
    return LabelIndex(
        LabelWine(r["id"], r["name"], r["producer"], r["region"], r["vintage"]) for r in rows
    )


@pytest.mark.parametrize(
    ("named", "sure", "found"),
    [
        # The producer's first word and the name: a person's way of naming it.
        ("Catena Malbec", True, ["Catena Malbec"]),
        ("Catena Malbec 2019", True, ["Catena Malbec"]),
        ("Cloudy Bay Sauvignon Blanc", True, ["Cloudy Bay Sauvignon Blanc"]),
        # A grape or a place alone: the wines it may be, for the person to choose.
        ("Malbec", False, ["Catena Malbec", "Catena Zapata Malbec Argentino"]),
        ("Barolo", False, ["Pio Cesare Barolo"]),
        ("Dr Loosen Riesling", False, ["Dr. Loosen Blue Slate Riesling Kabinett"]),
        # A wine the catalog lacks: nothing to choose from.
        ("Château Imaginaire Grand Vin", False, []),
        # Every word the wine's, one short of its name.
        ("Marques de Riscal", True, ["Marqués de Riscal Reserva"]),
    ],
)
def test_a_named_wine_is_matched_to_the_catalog_or_offered_as_candidates(
    named: str, sure: bool, found: list[str]
) -> None:
    matches, was_sure = candidates(starter_index(), named)
    assert was_sure is sure
    assert [m.name for m in matches] == found


@pytest.mark.parametrize(
    ("text", "cellar", "expected"),
    [
        ("I bought 6 bottles of Catena Malbec", False, True),
        ("Ich habe 3 Flaschen Riesling gekauft", False, True),
        ("a red for steak under 20", False, False),  # nothing said of having: never offered
        ("a red for steak under 20", True, True),  # a cellar's owner: the plan decides
        # No word list: offered only to a cellar's owner (requests are far more common).
        ("Kupiłem sześć butelek Malbeca", False, False),
        ("Kupiłem sześć butelek Malbeca", True, True),
    ],
)
def test_adding_is_offered_to_the_plan_only_where_it_may_be_meant(
    text: str, cellar: bool, expected: bool
) -> None:
    context = {READING: read(text), **({"cellar_wine_ids": ["sm-059"]} if cellar else {})}
    turn = TurnInput([], context=context)
    assert offered(turn) is expected
    assert offered(TurnInput([], context={**context, "unstored": True})) is False  # guest mode


def test_a_plan_that_adds_with_nothing_said_of_having_or_asking_for_wine_searches() -> None:
    step = PlannedStep(NAME, {"wine": "Catena Malbec", "bottles": 1})
    for english, action, fired in [
        ("I would like a Catena Malbec for dinner", "search_wines", ("cellar_add_unsaid",)),
        ("I bought six bottles of Catena Malbec", NAME, ()),
        # Bought something else, and asking for wine (unseen32: goat cheese, a gift).
        (
            "I have bought goat cheese. What white wine do you recommend?",
            "search_wines",
            ("cellar_add_asked",),
        ),
        (
            "I have bought a gift, now I need a prosecco under 15 euros.",
            "search_wines",
            ("cellar_add_asked",),
        ),
        # Asked, but of their cellar.
        ("Can you add 2 bottles of Catena Malbec to my cellar?", NAME, ()),
        ("I want to buy 2 bottles of Rioja and add them to my cellar.", NAME, ()),
        # "a bottle" asks for nothing here: they had one.
        ("I was given a bottle of Catena Malbec by a friend.", NAME, ()),
        # Their cellar named as where to look is no adding.
        (
            "I picked up some prawns. Is there anything in my cellar for them?",
            "search_wines",
            ("cellar_add_asked",),
        ),
    ]:
        turn = TurnInput([], context={READING: read("Ich möchte einen Catena Malbec")})
        reviewed = gist.review(read("Ich möchte einen Catena Malbec"), turn, english, step)
        assert (reviewed.action, reviewed.fired) == (action, fired)


async def test_prepare_mends_what_a_small_model_writes_loosely(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from sommelier.catalog.tools import CatalogTools

    adding = Adding(CatalogTools(sqlite_app.sessions))
    turn = TurnInput([{"role": "user", "content": "J'ai acheté 6 bouteilles de Chablis 2020"}])
    raw = {"wine": "Chablis", "bottles": 2020, "vintage": "2020", "place": "  "}
    args = AddArgs.model_validate(await adding.prepare(raw, turn))
    assert (args.bottles, args.vintage, args.place, args.language) == (1, 2020, None, "fr")
    # A vintage and a place nobody said are left out; those said stay.
    said = "Купил 2 бутылки Catena Malbec, они на полке B"
    turn = TurnInput([{"role": "user", "content": said}])
    raw = {"wine": "Catena Malbec", "bottles": 2, "vintage": 2021, "place": "cellar"}
    args = AddArgs.model_validate(await adding.prepare(raw, turn))
    assert (args.vintage, args.place) == (None, None)
    raw = {**raw, "place": "полке B"}
    assert AddArgs.model_validate(await adding.prepare(raw, turn)).place == "полке B"


async def test_bottles_said_are_planned_and_proposed_from_data_with_no_answer_call(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([plan(NAME, CATENA, english=BOUGHT)])
    result = await planner(sqlite_app, model).turn(ANA, BOUGHT)
    (planning,) = model.requests  # no search, no answer call
    assert NAME in planning["output"].schema["properties"]["action"]["enum"]
    assert result.ok and [c.name for c in result.cards] == ["Catena Malbec"]
    assert result.intro == "Shall I add 6 bottles of this wine to your cellar?\n2019 · rack B"
    assert result.adding == {**CATENA, "sure": True}
    assert [c.purpose for c in await model_calls(sqlite_app)] == ["plan"]
    stored = (await stored_messages(sqlite_app))[1]
    assert stored.reply is not None and stored.reply["adding"]["bottles"] == 6
    assert stored.wine_ids == ["sm-059"]
    async with sqlite_app.sessions() as session:  # a press adds them (bot/adding.py), not this
        assert await session.scalar(select(func.count()).select_from(CellarBottle)) == 0


async def test_arguments_written_for_adding_under_another_action_add(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """The 1.5B model wrote "search_wines", then add_to_cellar's arguments (unseen32)."""
    said = "Ich habe gerade 3 Flaschen Dönnhoff Riesling Trocken gekauft."
    doennhoff = {"wine": "Dönnhoff Riesling Trocken", "bottles": 3, "vintage": None, "place": None}
    english = "I bought 3 bottles of Dönnhoff Riesling Trocken."
    model = ScriptedModel([plan("search_wines", doennhoff, english=english)])
    result = await planner(sqlite_app, model).turn(ANA, said)
    assert result.adding is not None and [c.wine_id for c in result.cards] == ["sm-045"]
    (call,) = await model_calls(sqlite_app)
    assert call.rules == ["plan_arguments_chose"]


async def test_an_unknown_wine_is_offered_as_named(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    said = "We just got a case of Château Imaginaire Grand Vin"
    arguments = {"wine": "Château Imaginaire Grand Vin", "bottles": 12, "vintage": None}
    model = ScriptedModel([plan(NAME, {**arguments, "place": None}, english=said)])
    result = await planner(sqlite_app, model).turn(ANA, said)
    assert result.ok and result.cards == []
    assert result.intro == (
        "“Château Imaginaire Grand Vin” is not in the catalog. Shall I add 12 bottles of it as "
        "you named it?"
    )


async def test_a_request_planned_as_adding_is_searched_and_answered(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """A small model may plan adding for a wish; the gist says no bottles were had."""
    asked, english = "Chciałbym kupić Catena Malbec", "I would like to buy a Catena Malbec"
    model = ScriptedModel(
        [plan(NAME, {**CATENA, "bottles": 1}, english=english), answer(reply(["sm-059"]))]
    )
    result = await planner(sqlite_app, model).turn(ANA, asked)
    assert result.ok and result.adding is None and result.cards[0].wine_id == "sm-059"
    calls = await model_calls(sqlite_app)
    assert [c.purpose for c in calls] == ["plan", "answer"]
    assert calls[0].rules == ["cellar_add_unsaid"]


async def test_a_native_tool_caller_that_adds_gets_the_proposal_at_once(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel([tools((NAME, CATENA))])
    result = await native(sqlite_app, model).turn(ANA, BOUGHT)
    assert len(model.requests) == 1
    assert result.ok and result.adding is not None and result.cards[0].wine_id == "sm-059"


async def test_the_proposal_is_in_the_persons_language(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    said = "Ich habe 3 Flaschen Riesling gekauft"
    riesling = {"wine": "Riesling", "bottles": 3, "vintage": None, "place": None}
    model = ScriptedModel([plan(NAME, riesling, english="I bought 3 bottles of Riesling")])
    result = await planner(sqlite_app, model).turn(ANA, said)
    assert result.intro == "Welcher ist es? Ich lege 3 Flaschen davon in deinen Keller."
    assert len(result.cards) == 3 and result.language == "de"


def test_a_question_in_their_own_words_is_no_bottle_to_add_though_the_gist_drops_it() -> None:
    said = "Ich habe frischen Lachs gekauft. Welcher Weißwein passt dazu?"
    step = PlannedStep(NAME, {"wine": "Lachs", "bottles": 1})
    turn = TurnInput([], context={READING: read(said)})
    reviewed = gist.review(read(said), turn, "I bought fresh Lachs.", step)
    assert (reviewed.action, reviewed.fired) == ("search_wines", ("cellar_add_asked",))


async def test_for_a_cellar_owner_adding_is_a_third_source_beside_shop_and_own_bottles(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    """An owner's plan writes where to look first; adding new bottles is one of the places."""
    await _owner(sqlite_app)
    said = "Picked up 2 bottles of Trimbach Riesling today."
    trimbach = {"source": "add_bought_bottles", **CATENA, "wine": "Trimbach Riesling", "bottles": 2}
    model = ScriptedModel([plan("search_wines", {**trimbach, "vintage": None}, english=said)])
    result = await planner(sqlite_app, model).turn(ANA, said)
    schema = model.requests[0]["output"].schema["properties"]["arguments"]["anyOf"]
    sources = [a["properties"]["source"]["enum"] for a in schema if "source" in a["properties"]]
    assert sources == [["buy_from_shop", "open_own_bottle"], ["add_bought_bottles"]]
    assert result.adding is not None and [c.wine_id for c in result.cards] == ["sm-015"]
    assert result.adding["place"] is None  # "rack B" was never said


async def _owner(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from sommelier.cellar.files import CellarRow
    from sommelier.cellar.store import add_rows, cellar_of, owner_of

    async with sqlite_app.sessions() as session, session.begin():
        cellar = await cellar_of(session, await owner_of(session, ANA))
        await add_rows(session, cellar, [CellarRow(1, "Pio Cesare Barolo", 2)], None, "csv")


OWN_SEARCH = {"source": "open_own_bottle", "type": "red", "country": "Italy", "max_price": 0}


async def _owner_searched(app, said: str, query: str, english: str, *more: dict):  # type: ignore[no-untyped-def]
    """A cellar owner's turn whose plan searched their bottles for `query` (as the 1.5B model
    did for bottles they told of), with its gist `english`; `more`: the model's next replies."""
    await _owner(app)
    planned = plan("search_wines", {**OWN_SEARCH, "query": query}, english=english)
    return await planner(app, ScriptedModel([planned, *more])).turn(ANA, said)


async def test_an_owners_search_for_bottles_the_gist_says_they_bought_proposes_adding(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    """The 1.5B model searched their own bottles, its gist saying "I have bought 3 bottles of
    …", for 10 of 14 owners (unseen35, unseen37): the search's words name the wine to add."""
    said = "Ich habe vier Flaschen Zenato Valpolicella Ripasso Superiore gekauft."
    english = "I have bought four bottles of Zenato Valpolicella Ripasso Superiore."
    zenato = "Zenato Valpolicella Ripasso Superiore"
    result = await _owner_searched(sqlite_app, said, zenato, english)
    assert [c.wine_id for c in result.cards] == ["sm-024"] and result.language == "de"
    assert result.adding is not None and result.adding["bottles"] == 4
    (call,) = await model_calls(sqlite_app)  # the plan alone: no search, no answer call
    assert call.rules == ["cellar_add_said"]


async def test_adding_planned_with_a_searchs_arguments_adds_the_wine_they_name(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    """The 1.5B model named add_to_cellar and wrote a search's arguments (unseen42): the
    search's words are the wine, the count is the person's."""
    await _owner(sqlite_app)
    said = "I bought five bottles of Mouton Cadet Bordeaux Rouge for everyday drinking."
    searched = {"source": "buy_from_shop", "query": "Mouton Cadet Bordeaux Rouge", "type": "red"}
    model = ScriptedModel([plan(NAME, searched, english=said)])
    result = await planner(sqlite_app, model).turn(ANA, said)
    assert result.adding is not None and result.adding["bottles"] == 5
    assert result.adding["wine"] == "Mouton Cadet Bordeaux Rouge"
    assert [c.wine_id for c in result.cards] == ["sm-003"]
    (call,) = await model_calls(sqlite_app)
    assert call.rules == ["cellar_add_search_words"]


async def test_bottles_told_of_are_no_wish_the_next_request_keeps(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """ "Just bought 3 bottles of Penfolds Bin 28 Kalimna Shiraz", then "What else from my
    cellar goes with a steak?": the cellar was searched for Shiraz (unseen38)."""
    await _owner(sqlite_app)
    said = "Just bought 3 bottles of Penfolds Bin 28 Kalimna Shiraz."
    penfolds = {"wine": "Penfolds Bin 28 Kalimna Shiraz", "bottles": 3, "vintage": None}
    steak = "What else from my cellar goes with a steak?"
    model = ScriptedModel(
        [
            plan(NAME, {**penfolds, "place": None}, english=said),
            # the 1.5B model wrote the grape of the bottles just told of
            plan(
                "search_wines", {**OWN_SEARCH, "query": "steak", "grape": "shiraz"}, english=steak
            ),
            answer(reply(["sm-026"])),
        ]
    )
    chat = planner(sqlite_app, model)
    assert (await chat.turn(ANA, said)).adding is not None
    result = await chat.turn(ANA, steak)
    assert [c.wine_id for c in result.cards] == ["sm-026"]
    assert "Syrah" not in result.text  # no "None of your bottles is made from Syrah"


@pytest.mark.parametrize(
    ("said", "query", "english"),
    [
        # A question stays a search, though it says what they bought.
        (
            "J'ai acheté un comté. Quelle bouteille de ma cave ouvrir ?",
            "comté",
            "I bought a comté. What bottle from my cellar should I open?",
        ),
        # Bottles of something the catalog has no wine of are nothing to add.
        (
            "Ho comprato due bottiglie di olio d'oliva per la cena.",
            "olio d'oliva cena",
            "I bought two bottles of olive oil for dinner.",
        ),
        # Bought, but no bottles: the fish is dinner.
        (
            "Ho comprato il branzino per stasera.",
            "Pio Cesare Barolo",
            "I bought sea bass for tonight.",
        ),
    ],
)
async def test_an_owners_search_stays_one_unless_the_gist_states_bottles_of_a_catalog_wine(
    sqlite_app, said: str, query: str, english: str
) -> None:  # type: ignore[no-untyped-def]
    result = await _owner_searched(
        sqlite_app, said, query, english, *[answer(reply(["sm-026"]))] * 3
    )
    assert result.adding is None and not result.intro.startswith("Shall I add")
    calls = await model_calls(sqlite_app)
    assert calls[0].purpose == "plan" and "cellar_add_said" not in (calls[0].rules or [])
    assert "answer" in [c.purpose for c in calls[1:]]  # searched, and the model answered


@pytest.mark.parametrize(
    ("english", "own_words", "bottles"),
    [
        ("I picked up a case of Beaujolais today, 12 bottles.", "", 12),
        ("We got a case of Rioja.", "", 12),
        ("I have bought two bottles of Barolo.", "", 2),
        ("Half a dozen bottles of Sancerre.", "", 6),
        ("I bought a magnum of Champagne.", "", 1),
        ("I bought 2019 bottles", "", 1),  # a vintage, not a count
        # The gist lost the count the person wrote.
        ("We bought a box of Mulderbosch Rosé.", "Comprámos uma caixa de …, 6 garrafas.", 6),
        # A number in the wine's name is no count.
        ("I have bought two Graham's 10 Year Old Tawny bottles.", "… Graham's 10 Year Old …", 1),
    ],
)
def test_the_count_of_bottles_is_read_from_the_gist(
    english: str, own_words: str, bottles: int
) -> None:
    from sommelier.catalog.lexicon import fold

    named = "Graham's 10 Year Old Tawny"
    assert gist.bottles_counted(fold(english), own_words, named=named) == bottles


async def test_an_english_message_is_read_in_its_own_words_and_in_the_models(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    said = "Snagged 4 bottles of Mionetto Prosecco Brut on the way home."  # no list has it
    english = "I have bought 4 bottles of Mionetto Prosecco Brut on the way home."
    result = await _owner_searched(sqlite_app, said, "Mionetto Prosecco Brut", english)
    assert result.adding is not None and result.adding["bottles"] == 4
    assert [c.wine_id for c in result.cards] == ["sm-029"]


async def test_a_translation_keeps_a_long_wine_name_as_it_was_and_is_still_read(
    sqlite_app,
) -> None:  # type: ignore[no-untyped-def]
    """Seven of the gist's twelve words are the wine's name, copied: still a translation; and
    the count before the name is the bottles'."""
    said = "Me regalaron dos botellas de La Rioja Alta Gran Reserva 904 2015."
    english = "I was given two La Rioja Alta Gran Reserva 904 2015 bottles."
    rioja = "La Rioja Alta Gran Reserva 904 2015"
    result = await _owner_searched(sqlite_app, said, rioja, english)
    assert result.adding is not None and [c.wine_id for c in result.cards] == ["sm-033"]
    assert (result.adding["bottles"], result.adding["vintage"]) == (2, 2015)


async def test_bottles_told_of_are_no_question_for_the_knowledge_table() -> None:
    from sommelier.catalog.reading import Names
    from sommelier.chat.knowledge import NAME as KNOWLEDGE
    from sommelier.chat.policy import SommelierPolicy

    class Catalog:
        async def names(self) -> Names:
            return Names()

    policy = SommelierPolicy(Catalog())  # type: ignore[arg-type]
    for said in (
        "I bought 3 bottles of Barolo to age in the cellar.",
        "Ich habe 2 Flaschen Barolo gekauft, zum Lagern im Keller.",
    ):
        rules = await policy.rules(TurnInput([{"role": "user", "content": said}]))
        assert rules.required_tool != KNOWLEDGE and not rules.settled


async def test_a_place_that_is_the_wines_own_name_is_no_place(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from sommelier.catalog.tools import CatalogTools

    adding = Adding(CatalogTools(sqlite_app.sessions))
    args = AddArgs(wine="Riesling", bottles=2, place="Trimbach", language="en")
    output = await adding.run(args)
    assert output.notes["adding"]["place"] is None
