"""The plan's English gist of a message, read with the English word lists.

A small model translates better than it classifies: on unseen10 the 1.5B model planned a wine
search for a bus timetable and a Python question, yet the English it wrote beside ("Uppsala
bus", "python list sort") was faithful. So the plan writes the message in English as its last
field, and data decides:
- `gist_other_subject`: a message that names nothing of wine, drinks, food or an occasion, in
  its own words or in the English, asks for no recommendation (or asks for a thing that is not
  wine: a book, a phone), and has no wines in view, gets the fixed steer back to wine;
- `wine_named_searched`: a plan that calls a message another subject, when its own words name
  wine, drinking or a meal, searches instead;
- `nothing_to_look_up`: a wine looked up with none in view and none named is searched for.
A gist that is no translation (empty, the schema's words, a copy of the message or of the
prompt's example) is no evidence, and an English message is read in its own words, never the
model's paraphrase of it. The gist's dish is not used: on unseen13 it was right as
often as wrong ("pastitsio" became a pastry, "ayam bakar" grilled fish).
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from sommelier.agent.strategies import ANSWER_ACTION as ANSWER
from sommelier.agent.strategies import TRANSLATIONS
from sommelier.agent.text import QUESTION_MARKS
from sommelier.agent.turn import PlannedStep, TurnInput
from sommelier.catalog.colours import colour_named
from sommelier.catalog.lexicon import Phrases, fold, lexicon
from sommelier.catalog.reading import Names, Reading, read, words_for
from sommelier.catalog.tool_arguments import NAMES, names_a_wine
from sommelier.catalog.tools import CELLAR, OWN, PREVIOUS, SHOP
from sommelier.catalog.topic_words import on_the_subject
from sommelier.cellar.adding import MAX_BOTTLES, YEAR
from sommelier.cellar.adding import NAME as ADD
from sommelier.cellar.adding import offered as adding_offered
from sommelier.chat.guard import OTHER_SUBJECT, REPLIES
from sommelier.i18n.languages import detect

SEARCH, LOOK_UP = "search_wines", "get_wine"
# What a wine wish is made of; a place alone is not ("what is the capital of Australia?").
WISHES = ("type", "types", "sweetness", "body", "grape", "food", "min_price", "max_price")
# A body or sweetness the lists find in the person's words is often a typo's mending ("leggere",
# to read, taken for "leggero", light): in the gist, "light" was written as such.
OWN_WISHES = tuple(k for k in WISHES if k not in ("body", "sweetness"))
PLACES = ("country", "countries", "region")
APPELLATION = "region"  # the catalog's regions are wine's own places
ASKING = ("asks", "request")  # "consigli", "recommend": they ask, but not for wine by themselves
# The schema's own description, as the 1.5B model echoed it ("The person's last message
# translated into English:"; "person's" splits into "person" and "s").
SCHEMA_WORDS = frozenset(
    {"person", "s", "message", "last", "translated", "english", "plan", "into"}
)
MIN_WORDS = 2
COPIED = 0.8


# Words of wine, drink, food or an occasion, and wine's own terms ("tannin", "terroir"): the
# gist of "What are tannins, in plain words?" named nothing else, and got the steer away.
_TOPIC = Phrases.of(
    (phrase, True) for key in ("topic", "term") for phrase in lexicon("en").words[key]
)


def review(reading: Reading, turn: TurnInput, english: str, step: PlannedStep) -> PlannedStep:
    """The plan as the person's words and its gist support it. `reading`: the person's own
    words, read once."""
    shown = bool(turn.context.get(PREVIOUS))
    if step.action == OTHER_SUBJECT and not shown and own_evidence(reading):
        # "Milyen bort igyunk a halászléhez?" planned as another subject: it names wine.
        return PlannedStep(SEARCH, {}, ("wine_named_searched",))
    if step.action == LOOK_UP and not shown and not names_a_wine(turn.request):
        # A wine looked up with none in view and none named: the 1.5B model planned it for
        # "すき焼きに合うワインを教えてください"; a search is what was asked for.
        step = PlannedStep(SEARCH, step.arguments, ("nothing_to_look_up",))
    if _english(reading):
        # An English message is its own gist: the model's paraphrase can only add to it (the
        # 1.5B model wrote "What temperature should I serve the wine…" for a football question,
        # and a search followed).
        english = turn.request
    if not usable(english, reading):
        return step
    names = turn.context.get(NAMES)
    gist = read(english, names if isinstance(names, Names) else Names(), language="en")
    if step.action == ADD:
        # Before the subject is judged: a wine named alone ("three Ridge Lytton Springs") has
        # no word of wine in it, and the proposal says what the catalog makes of it.
        had = bottles_had(english, gist, step, turn, _asks(reading))
        # a search after all looks where the words say: "… cosa apro dalla mia cantina?" (unseen44)
        return where_to_look(turn, english, had, reading) if had.action == SEARCH else had
    if step.action not in REPLIES and off_subject(reading, gist, english, shown):
        # (thanks, or an attempt on the rules, is no wine request either, and says more)
        return PlannedStep(OTHER_SUBJECT, {}, ("gist_other_subject",))
    return where_to_look(turn, english, step, reading)


def bottles_had(
    english: str, gist: Reading, step: PlannedStep, turn: TurnInput, asks: bool
) -> PlannedStep:
    """A plan to add bottles, as the gist supports it: with nothing said of having bottles
    ("I'd like a Catena Malbec"), or asking for wine ("I bought goat cheese. What white wine
    would you recommend?", a price, "need", "recommend") without naming their cellar, it is a
    search, as asked. `asks`: a question mark in the person's own words (a gist may leave the
    question out: "I bought fresh Lachs." for "Ich habe frischen Lachs gekauft. Welcher
    Weißwein passt?")."""
    said = fold(english)
    if said not in _phrases("cellar_gist.toml", "adding"):
        return PlannedStep(SEARCH, {}, (*step.fired, "cellar_add_unsaid"))
    asking = said in _phrases("cellar_gist.toml", "asking")  # not "a bottle": they had one
    asked = asks or "?" in english or gist.price is not None or asking
    if asked and said not in _phrases("cellar_gist.toml", "adding_named"):
        return PlannedStep(SEARCH, {}, (*step.fired, "cellar_add_asked"))
    query = step.arguments.get("query")
    if "wine" not in step.arguments and isinstance(query, str) and len(query.strip()) >= 2:
        # add_to_cellar named, with a search's arguments: its words are the wine (unseen42)
        adding = _adding(query, [said], turn.request)
        return PlannedStep(ADD, adding, (*step.fired, "cellar_add_search_words"))
    return step


BOTTLES_SAID = "cellar_add_said"
CASE = 12  # bottles in a case, unless a count is said
# A magnum counts as a bottle; a case, box or crate as twelve.
COUNTED = re.compile(
    r"(\S+(?: \S+){0,2}) (bottles?|magnums?|(?:cases?|box(?:es)?|crates?|cartons?) of)\b"
)


def bottles_said(
    reading: Reading, turn: TurnInput, english: str, step: PlannedStep
) -> PlannedStep | None:
    """Adding, for a search planned where the gist states bottles got, and asks nothing: "I have
    bought 3 bottles of Zenato Valpolicella Ripasso Superiore." The search's words are the wine;
    the caller keeps the step only when the catalog has such a wine (a statement of "2 bottles
    of olive oil" is no wine to add)."""
    query = step.arguments.get("query")
    if step.action != SEARCH or not isinstance(query, str) or not adding_offered(turn):
        return None
    if len(query.strip()) < 2 or _asks(reading) or "?" in english:
        return None
    # An English message is read in its own words and in the model's ("Grabbed 4 bottles of
    # …" is "I have bought 4 bottles of …"); asking, in either, keeps the search.
    gists = [english] if usable(english, reading, named=query) else []
    if _english(reading):
        gists = [turn.request, *gists]
    said = [fold(g) for g in gists]
    if not any(_states_bottles(s) for s in said) or any(_asking(s) for s in said):
        return None
    return PlannedStep(ADD, _adding(query, said, turn.request), (*step.fired, BOTTLES_SAID))


def _adding(query: str, said: list[str], request: str) -> dict[str, Any]:
    """add_to_cellar's arguments from a search's words and the folded gists: the place and
    vintage are left to its `prepare`, which takes them from the person's words."""
    # "two Trimbach Riesling 2020 bottles": the count is read with the wine's name left out
    unnamed = " / ".join(" ".join(g.replace(fold(query.strip()), " ").split()) for g in said)
    bottles = bottles_counted(unnamed, request, named=query)
    return {"wine": query.strip(), "bottles": bottles, "vintage": None, "place": None}


def _asking(said: str) -> bool:
    return said in _phrases("cellar_gist.toml", "asking") or bool(read(said, language="en").price)


def _states_bottles(said: str) -> bool:
    """Bottles got, in a folded English gist: a word of getting them, and a bottle, a case or a
    vintage year ("I bought a Dom Pérignon 2013")."""
    if said not in _phrases("cellar_gist.toml", "acquired"):
        return False
    return said in _phrases("cellar_gist.toml", "containers") or bool(YEAR.search(said))


def bottles_counted(said: str, own_words: str = "", named: str = "") -> int:
    """How many bottles a folded English gist says ("three bottles", "12 bottles"); else the
    one count in the person's own words ("uma caixa …, 6 garrafas") that is not a vintage or
    part of the wine's name (`named`: "Graham's 10 Year Old Tawny"); else a case's twelve per
    case; else one."""
    bottles = cases = 0
    for match in COUNTED.finditer(said):
        count = _count(match.group(1))
        if count and match.group(2).startswith(("bottle", "magnum")):
            bottles = bottles or count
        elif count:
            cases = cases or count
    counted = [n for n in _numbers(own_words) if n not in _numbers(named)]
    own = counted[0] if len(counted) == 1 and 0 < counted[0] <= MAX_BOTTLES else 0
    return bottles or own or cases * CASE or 1


def _numbers(text: str) -> list[int]:
    """Numbers of up to three digits: a count, never a vintage."""
    return [int(n) for n in re.findall(r"(?<!\d)\d{1,3}(?!\d)", text)]


def _count(before: str) -> int:
    """The count that ends the words before a container: digits, or one of the gist's count
    words ("a couple of")."""
    words = before.split()
    if words[-1].isdigit():
        return next(iter(_numbers(words[-1])), 0)  # "2019 bottles" is a vintage
    counts = _table("cellar_gist.toml")["counts"]
    for size in (3, 2, 1):
        value = counts.get(" ".join(words[-size:]))
        if len(words) >= size and value:
            return int(value)
    return 0


def where_to_look(
    turn: TurnInput, english: str, step: PlannedStep, own: Reading | None = None
) -> PlannedStep:
    """The plan's source as its English gist names it: buying is the shop, "my cellar" or "do I
    have" the person's own bottles; a question on them that planned no search searches.
    Buying counts in the person's own words (`own`) too: a gist may lose it."""
    if not turn.context.get(CELLAR):
        return step
    said = fold(english)
    buying, owned = (said in phrases for phrases in _cellar_gist())
    buying = buying or (own is not None and _buys(own))
    source = step.arguments.get("source")
    if step.action == SEARCH and source == OWN and buying and not owned:
        return PlannedStep(
            SEARCH, {**step.arguments, "source": SHOP}, (*step.fired, "cellar_buying_in_shop")
        )
    if step.action == SEARCH and source != OWN and owned and not buying:
        return PlannedStep(
            SEARCH, {**step.arguments, "source": OWN}, (*step.fired, "cellar_own_named")
        )
    if step.action == ANSWER and owned and not buying:
        return PlannedStep(SEARCH, {"source": OWN}, (*step.fired, "cellar_own_searched"))
    return step


def _asks(reading: Reading) -> bool:
    """A question mark in the person's own words, in any script (Greek writes ";")."""
    marks = [m for m in QUESTION_MARKS if m != ";" or reading.language == "el"]
    return any(mark in reading.text for mark in marks)


def _english(reading: Reading) -> bool:
    """Written in English: answered in it, and read so by the detector too (English is also
    where a language no list covers falls back to: Swahili thanks are answered in English)."""
    found = detect(reading.text)
    return reading.language == "en" and found is not None and found[0] == "en"


def usable(english: str, reading: Reading, named: str = "") -> bool:
    """Whether the gist is a translation at all: some words, not the schema's, and not the
    message copied in its own language. `named`: a wine's name, which a translation keeps as
    it was ("I have bought two bottles of La Rioja Alta Gran Reserva 904 2015" shares seven of
    its thirteen words with the Spanish), so its words are no sign of a copy."""
    words = _words(english)
    if len(words) < MIN_WORDS or len(set(words) & SCHEMA_WORDS) * 2 >= len(words):
        return False
    if any(_copied(words, example) for _, example in TRANSLATIONS):
        return False
    if reading.language == "en":
        return True
    kept = set(_words(named))
    translated = [w for w in words if w not in kept]
    return len(set(translated) & set(_words(reading.folded))) * 2 < len(translated)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", fold(text))


def _copied(words: list[str], example: str) -> bool:
    """Whether the gist is mostly the prompt's example."""
    return len(set(words) & set(_words(example))) >= COPIED * len(set(words))


def off_subject(reading: Reading, gist: Reading, english: str, shown: bool) -> bool:
    """Nothing of wine, drinks, food or an occasion, in the person's words or in the gist, and
    no wines in view that the message could be about. Only positive evidence keeps a message on
    the subject, but that evidence is read in two languages, one of them the model's English.
    A request for a recommendation keeps it too ("tu conseilles quoi ?" under a dish no list
    knows), unless the gist names the thing asked for and it is not wine ("I want to buy a new
    phone"). With wines in view, only a thing named: the message may be about them ("and for
    a picnic?"), but "write me a resignation letter" got the last search's wines in eight
    languages of eight (guard2)."""
    if own_evidence(reading):
        return False
    other = names_another_thing(english)
    if (shown or reading.request or gist.request) and not other:
        return False
    wished = any(k in gist.filters for k in (*WISHES, APPELLATION))
    return not (wished or fold(english) in _TOPIC)


def names_another_thing(english: str) -> bool:
    """Whether the gist names a thing people ask for that is not wine (data/other_things.toml):
    a guitar, a book, a phone."""
    return fold(english) in _other_things()


@cache
def _other_things() -> Phrases:
    return _phrases("other_things.toml", "things")


def _buys(reading: Reading) -> bool:
    """Buying, or a gift to give, in the person's words (data/buying.toml)."""
    if reading.language not in _table("buying.toml"):
        return False
    # the words as written: the reading's mending took "regalar" for "regalaron" (unseen44)
    return fold(reading.text) in _phrases("buying.toml", reading.language)


@cache
def _cellar_gist() -> tuple[Phrases, Phrases]:
    """Buying, and the person's own bottles named (data/cellar_gist.toml)."""
    return _phrases("cellar_gist.toml", "buying"), _phrases("cellar_gist.toml", "owned")


@cache
def _phrases(name: str, key: str) -> Phrases:
    return Phrases.of((w, True) for w in _table(name)[key])


@cache
def _table(name: str) -> dict[str, Any]:
    path = resources.files("sommelier.chat").joinpath(f"data/{name}")
    return tomllib.loads(path.read_text("utf-8"))


def own_evidence(reading: Reading) -> bool:
    """Wine, drinking, a meal, a wish or a colour in the person's own words."""
    if _names_wine(reading) or on_the_subject(reading.folded) or colour_named(reading.folded):
        return True
    if any(k in reading.filters for k in OWN_WISHES) or APPELLATION in reading.filters:
        return True  # an appellation is wine's own place ("Rioja"); a country is not
    if any(k in reading.filters for k in PLACES) and reading.request:
        return True  # "anything from Hungary?"
    return reading.courtesy or reading.follow_up or any(reading.excluded.values())


def _names_wine(reading: Reading) -> bool:
    """A word of wine, drinking or a meal in the person's own words ("vino", "cena", "dazu"),
    or one of wine's own terms, not one that only asks ("mi consigli un libro?")."""
    words = words_for(reading.language, Names())
    terms = words.markers.get("term")
    if terms is not None and reading.folded in terms:
        return True  # wine's own terms: "tannin", "terroir", "millésime"
    wine = words.markers.get("wine")
    if wine is None:
        return False
    asking = [
        m for k in ASKING if k in words.markers for m in words.markers[k].find(reading.folded)
    ]
    return any(
        not any(a.start <= m.start and m.end <= a.end for a in asking)
        for m in wine.find(reading.folded)
    )
