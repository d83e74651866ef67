"""The plan's English gist of a message, read with the English word lists.

A small model translates far better than it classifies: on unseen10 the 1.5B model planned a
wine search for a bus timetable and a Python question, and picked kinds of dish nearly at
random, yet the English it wrote beside ("Uppsala bus", "python list sort", "bake chicken
wine") was faithful. So the plan writes the message in English, and data decides:
- `gist_dish`: a dish the English names (its food lexicon) is the dish to pair with, over the
  plan's own guess; it stays a guess (relaxed first, never named in a notice);
- `gist_other_subject`: a message that names nothing of wine, drinks, food or an occasion, in
  its own words or in the English, with no wines in view, gets the fixed steer back to wine.
A gist that is no translation (empty, a copy of a message in another language, the schema's
own words) is no evidence: the plan stands as the model wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sommelier.agent.turn import PlannedStep, TurnInput
from sommelier.catalog.colours import colour_named
from sommelier.catalog.lexicon import Phrases, fold, lexicon
from sommelier.catalog.reading import Names, Reading, read, words_for
from sommelier.catalog.tool_arguments import NAMES
from sommelier.catalog.tools import PREVIOUS
from sommelier.chat.guard import OTHER_SUBJECT

SEARCH = "search_wines"
# What a wine wish is made of; a place alone is not ("what is the capital of Australia?").
WISHES = ("type", "types", "sweetness", "body", "grape", "food", "min_price", "max_price")
# A body or sweetness the lists find in the person's words is often a typo's mending ("leggere",
# to read, taken for "leggero", light): in the gist, "light" was written as such.
OWN_WISHES = tuple(k for k in WISHES if k not in ("body", "sweetness"))
PLACES = ("country", "countries", "region")
ASKING = ("asks", "request")  # "consigli", "recommend": they ask, but not for wine by themselves
SCHEMA_WORDS = frozenset({"person", "persons", "message", "last", "translated", "english", "plan"})
MIN_WORDS = 2


def topic_words() -> Phrases:
    return Phrases.of((phrase, True) for phrase in lexicon("en").words["topic"])


_TOPIC = topic_words()


def review(reading: Reading, turn: TurnInput, english: str, step: PlannedStep) -> PlannedStep:
    """The plan as the gist supports it. `reading`: the person's own words, read once."""
    if not usable(english, reading):
        return step
    names = turn.context.get(NAMES)
    gist = read(english, names if isinstance(names, Names) else Names(), language="en")
    if off_subject(reading, gist, english, bool(turn.context.get(PREVIOUS))):
        return PlannedStep(OTHER_SUBJECT, {}, ("gist_other_subject",))
    food = gist.filters.get("food")
    dish = food and "food" not in reading.filters and step.arguments.get("food") != food
    if step.action == SEARCH and dish:
        arguments: Mapping[str, Any] = {**step.arguments, "food": food}
        return PlannedStep(step.action, arguments, ("gist_dish",))
    return step


def usable(english: str, reading: Reading) -> bool:
    """Whether the gist is a translation at all: some words, not the schema's, and not the
    message copied in its own language."""
    words = fold(english).split()
    if len(words) < MIN_WORDS or len(set(words) & SCHEMA_WORDS) * 2 >= len(words):
        return False
    if reading.language == "en":
        return True
    own = set(reading.folded.split())
    return len(set(words) & own) * 2 < len(words)


def off_subject(reading: Reading, gist: Reading, english: str, shown: bool) -> bool:
    """Nothing of wine, drinks, food or an occasion, in the person's words or in the gist, and
    no wines in view that the message could be about. Only positive evidence keeps a message on
    the subject, but that evidence is read in two languages, one of them the model's English."""
    if shown:
        return False
    if _names_wine(reading):
        return False
    for words, wishes in ((reading, OWN_WISHES), (gist, WISHES)):
        if any(k in words.filters for k in wishes):
            return False
        if any(k in words.filters for k in PLACES) and gist.request:
            return False  # "anything from Hungary?"
        if words.courtesy or words.follow_up or any(words.excluded.values()):
            return False
    if colour_named(reading.folded):
        return False
    return fold(english) not in _TOPIC


def _names_wine(reading: Reading) -> bool:
    """A word of wine, drinking or a meal in the person's own words ("vino", "cena", "dazu"),
    not one that only asks ("mi consigli un libro?")."""
    words = words_for(reading.language, Names())
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
