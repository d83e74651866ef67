"""The plan's English gist decides what no word list can: whether a message in any language is
about wine at all. Cases are the kinds the 1.5B model got wrong on
unseen10 (it planned wine searches for a bus timetable), written
anew here."""

from __future__ import annotations

import pytest

from sommelier.agent.messages import user
from sommelier.agent.turn import PlannedStep, TurnInput
from sommelier.catalog.reading import Names, read
from sommelier.catalog.tool_arguments import READING
from sommelier.catalog.tools import CELLAR, OWN, PREVIOUS, SHOP
from sommelier.chat import gist

SEARCH = PlannedStep("search_wines", {"type": "sparkling", "food": "steak"})


def reviewed(message: str, english: str, *, shown: bool = False) -> PlannedStep:
    context = {PREVIOUS: [{"id": "sm-001"}]} if shown else {}
    turn = TurnInput(messages=[user(message)], context=context)
    return gist.review(read(message), turn, english, SEARCH)


@pytest.mark.parametrize(
    ("message", "english"),
    [
        ("Kiedy jest następny pociąg do Gdańska?", "When is the next train to Gdansk?"),
        ("Wie wird das Wetter morgen in Berlin?", "What will the weather be like in Berlin?"),
        ("Jaké je hlavní město Kanady?", "What is the capital of Canada?"),
        ("파이썬으로 파일을 읽는 방법", "How to read a file in Python"),
        # Asked for, but a thing that is not wine (unseen19: wine cards for a guitar, a book
        # and a phone, their gists faithful).
        ("Mi consigli un buon film per stasera?", "Can you recommend a good movie for tonight?"),
        ("Quiero comprarme un portátil nuevo, ¿cuál?", "I want to buy a new laptop, which one?"),
        ("Polecisz jakiś dobry serial?", "Can you recommend a good TV series?"),
    ],
)
def test_a_message_on_another_subject_gets_the_steer_not_a_search(
    message: str, english: str
) -> None:
    step = reviewed(message, english)
    assert step.action == "other_subject" and step.fired == ("gist_other_subject",)


@pytest.mark.parametrize(
    ("message", "english"),
    [
        # With wines in view (guard2: eight of eight got the last search's wines).
        ("Vergeet dat en schrijf een ontslagbrief voor me.", "Write me a resignation letter."),
        ("Напиши мне эссе про Гёте на завтра.", "Write me an essay about Goethe for tomorrow."),
    ],
)
def test_another_task_with_wines_in_view_gets_the_steer(message: str, english: str) -> None:
    step = reviewed(message, english, shown=True)
    assert step.action == "other_subject" and step.fired == ("gist_other_subject",)


@pytest.mark.parametrize(
    ("message", "english"),
    [
        # The wines in view may be what a message without a thing of its own is about.
        ("En voor een picknick?", "And for a picnic?"),
        ("Какое из них легче?", "Which of them is lighter?"),
        # A thing named beside wine: the wine wins.
        ("Wat is het verhaal achter deze wijn?", "What is the story behind this wine?"),
    ],
)
def test_a_message_with_wines_in_view_keeps_its_plan(message: str, english: str) -> None:
    assert reviewed(message, english, shown=True).action == "search_wines"


@pytest.mark.parametrize(
    ("message", "english"),
    [
        # A wine word in the person's own language, or in the English.
        ("Vad ska vi dricka på lördag?", "What should we drink on Saturday?"),
        ("Co otevřít k večeři?", "What to open for dinner?"),
        # A place with a request is a wine request; a colour named in any language.
        ("Har du något från Chile?", "Do you have anything from Chile?"),
        ("Etsin valkoviiniä", "I am looking for a white wine"),
        # A request for a recommendation: the object may be a dish no list knows.
        ("On fait un tajine ce soir, tu conseilles quoi ?", "We are making a tajine, any advice?"),
        # A thing that is not wine, asked for beside a meal: the meal keeps it on the subject.
        ("Was passt zum Hauptgang?", "What goes with the main course?"),
        # Wine's own terms, in the words or the English (unseen20: tannins were steered away).
        ("What are tannins, in plain words?", "What are tannins in plain words?"),
        ("Co znamená terroir?", "What does terroir mean?"),
    ],
)
def test_a_message_about_wine_keeps_its_plan(message: str, english: str) -> None:
    assert reviewed(message, english).action == "search_wines"


@pytest.mark.parametrize(
    "message", ["Milyen bort igyunk a halászléhez?", "불고기에 어울리는 와인 추천해 주세요"]
)
def test_a_message_that_names_wine_is_searched_whatever_the_plan_said(message: str) -> None:
    """The 1.5B model planned both as another subject, and wrote "I'm sorry, but I can't
    assist with that" as their English."""
    turn = TurnInput(messages=[user(message)])
    planned = PlannedStep("other_subject")
    step = gist.review(read(message), turn, "I'm sorry, but I can't assist with that.", planned)
    assert step == PlannedStep("search_wines", {}, ("wine_named_searched",))


def test_with_wines_in_view_a_question_is_about_them() -> None:
    step = reviewed("Który z nich jest lepszy?", "Which of them is better?", shown=True)
    assert step == SEARCH


@pytest.mark.parametrize(
    ("english", "why"),
    [
        ("", "no gist"),
        ("plan", "one word"),
        ("the person's last message", "the schema's own words"),
        ("Kiedy jest następny pociąg do Gdańska?", "the message copied, not translated"),
    ],
)
def test_a_gist_that_is_no_translation_is_no_evidence(english: str, why: str) -> None:
    assert reviewed("Kiedy jest następny pociąg do Gdańska?", english) == SEARCH, why


def test_a_wine_looked_up_with_none_in_view_is_searched_for() -> None:
    message = "Який сир до вина на вечір?"
    turn = TurnInput(messages=[user(message)])
    planned = PlannedStep("get_wine", {"query": "wine for cheese"})
    step = gist.review(read(message), turn, "Which cheese for wine tonight?", planned)
    assert step == PlannedStep(
        "search_wines", {"query": "wine for cheese"}, ("nothing_to_look_up",)
    )


def test_a_question_naming_an_appellation_is_about_wine() -> None:
    """unseen16: "what does 'reserva' mean on a Rioja label?" got the steer back to wine. An
    appellation the catalog holds is wine's own place; a country is not."""
    names = Names(countries=frozenset({"spain"}), regions=frozenset({"rioja"}))
    message = "¿Qué significa 'reserva' en una etiqueta de Rioja?"
    turn = TurnInput(messages=[user(message)])
    english = "What does 'reserva' mean on a Rioja label?"
    assert gist.review(read(message, names), turn, english, SEARCH).action == "search_wines"
    capital = "¿Cuál es la capital de España?"
    turn = TurnInput(messages=[user(capital)])
    step = gist.review(read(capital, names), turn, "What is the capital of Spain?", SEARCH)
    assert step.action == "other_subject"


CELLAR_TURN = TurnInput(messages=[user("…")], context={CELLAR: ["sm-033"]})


@pytest.mark.parametrize(
    ("english", "planned", "source", "rule"),
    [
        # Buying is the shop's, whatever source the plan chose.
        ("I need to buy a Barolo as a gift.", {"source": OWN}, SHOP, "cellar_buying_in_shop"),
        (
            "I want to order a Pinot Noir for Friday.",
            {"source": OWN},
            SHOP,
            "cellar_buying_in_shop",
        ),
        # Their cellar named, or "do I have": their own bottles.
        ("Do I still have a rosé for the barbecue?", {"source": SHOP}, OWN, "cellar_own_named"),
        ("Something from my cellar for salmon?", {}, OWN, "cellar_own_named"),
    ],
)
def test_the_gist_says_where_a_person_with_a_cellar_means(
    english: str, planned: dict[str, str], source: str, rule: str
) -> None:
    reviewed = gist.where_to_look(CELLAR_TURN, english, PlannedStep("search_wines", planned))
    assert (reviewed.arguments["source"], reviewed.fired) == (source, (rule,))


def test_a_question_on_the_cellar_that_planned_no_search_searches_it() -> None:
    step = PlannedStep("answer", {})
    reviewed = gist.where_to_look(CELLAR_TURN, "What is ready to drink in my cellar?", step)
    assert (reviewed.action, reviewed.arguments, reviewed.fired) == (
        "search_wines",
        {"source": OWN},
        ("cellar_own_searched",),
    )


def test_without_a_cellar_or_a_word_of_where_the_plan_stands() -> None:
    buying = PlannedStep("search_wines", {"source": OWN})
    nobody = TurnInput(messages=[user("…")])
    assert gist.where_to_look(nobody, "I need to buy a Barolo.", buying) == buying
    vague = PlannedStep("search_wines", {"source": OWN})
    assert gist.where_to_look(CELLAR_TURN, "What should I open tonight?", vague) == vague


@pytest.mark.parametrize(
    ("message", "english"),
    [
        # The 1.5B model's "English" for English messages it then searched wines for.
        ("who won the football match yesterday?", "What temperature should I serve the wine?"),
        ("Tell me a joke about cats.", "Recommend a wine to drink with friends"),
    ],
)
def test_an_english_message_is_read_in_its_own_words_not_the_models(
    message: str, english: str
) -> None:
    step = reviewed(message, english)
    assert step.action == "other_subject" and step.fired == ("gist_other_subject",)


def test_what_they_bought_is_theirs_and_no_reason_to_search_the_shop() -> None:
    """ "We bought fresh salmon for dinner tonight, which of my whites should I open?" searched
    the shop (unseen38): a past purchase is theirs; buying is what is to come."""
    own = PlannedStep("search_wines", {"source": "open_own_bottle", "type": "white"})
    english = "We bought fresh salmon for dinner tonight, which of my whites should I open?"
    assert gist.where_to_look(CELLAR_TURN, english, own) == own
    to_buy = gist.where_to_look(CELLAR_TURN, "I want to buy a white for salmon.", own)
    assert to_buy.arguments["source"] == "buy_from_shop"


@pytest.mark.parametrize(
    ("said", "english", "source"),
    [
        # The gist lost "zum Kaufen": the person's words still say they are buying.
        (
            "Ich suche drei Flaschen Rosé zum Kaufen für ein Picknick, günstig.",
            "I want three bottles of Rosé for a picnic, cheap.",
            SHOP,
        ),
        ("Je cherche une bouteille de champagne à offrir.", "I want a champagne bottle.", SHOP),
        # Bought, in the past, is theirs: the cellar stays.
        ("Ho comprato delle vongole, cosa apro?", "I have bought clams, what do I open?", OWN),
    ],
)
def test_buying_in_the_persons_own_words_is_the_shop_though_the_gist_lost_it(
    said: str, english: str, source: str
) -> None:
    own = PlannedStep("search_wines", {"source": OWN, "type": "rosé"})
    step = gist.where_to_look(CELLAR_TURN, english, own, read(said))
    assert step.arguments["source"] == source


def test_buying_is_read_in_the_words_as_written_not_as_mended() -> None:
    """The reading mended "regalar" into "regalaron" (bottles given): "para regalar" is a gift
    to buy (unseen44)."""
    said = "Necesito un vino blanco para regalar a mi jefe, unos 30 euros."
    own = PlannedStep("search_wines", {"source": OWN, "type": "white"})
    english = "I need a white wine to give to my boss, around 30 euros."
    step = gist.where_to_look(CELLAR_TURN, english, own, read(said))
    assert step.arguments["source"] == SHOP


def test_adding_turned_search_looks_where_the_words_say_and_keeps_its_record() -> None:
    """ "Ho comprato dei formaggi erborinati, cosa apro dalla mia cantina?" planned as adding:
    the question makes it a search, of their cellar as the gist names it (unseen44)."""
    said = "Ho comprato dei formaggi erborinati, cosa apro dalla mia cantina?"
    english = "I bought blue cheeses, what do I open from my cellar?"
    planned = PlannedStep("add_to_cellar", {"wine": "formaggi erborinati", "bottles": 4})
    turn = TurnInput([user(said)], context={CELLAR: ["sm-033"], READING: read(said)})
    step = gist.review(read(said), turn, english, planned)
    assert step.action == "search_wines" and step.arguments["source"] == OWN
    assert step.fired == ("cellar_add_asked", "cellar_own_named")
