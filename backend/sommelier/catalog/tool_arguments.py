"""What a model wrote, merged with the person's own words into the catalog tools' arguments.

The model's reading (a planning call, or native tool arguments) fills what the words do not
say. The words add filters and veto model values they contradict (another colour, a country
they turn down, a price when they name none); they never replace a model value they do not
contradict. Model values are checked first: controlled values must be known, places and grapes
must be names the catalog or CLDR knows (else they only rank, as free text), and prose is
dropped. Follow-ups mean something: "cheaper" is below the dearest wine of the previous reply,
"something different" leaves out the wines already shown, a follow-up without a subject of its
own keeps the previous request's, and a budget holds for the rest of the conversation.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sommelier.agent.turn import TurnInput
from sommelier.catalog.colours import colour_named, sweetness_named
from sommelier.catalog.dishes import named
from sommelier.catalog.lexicon import (
    STEM_AFTER,
    Match,
    country_names,
    fold,
    lexicon,
    territory_names,
    unspaced,
)
from sommelier.catalog.prices import price_words
from sommelier.catalog.reading import CHEAP, SUBJECTS, Names, Reading, read
from sommelier.catalog.vocabulary import (
    BODIES,
    BODY_ALIASES,
    FOOD_ALIASES,
    GRAPE_ALIASES,
    SWEETNESS,
    SWEETNESS_ALIASES,
    TYPE_ALIASES,
    WINE_TYPES,
    canonical_choice,
    query_groups,
)
from sommelier.i18n.languages import COVERED

log = logging.getLogger("sommelier.catalog")

PROFILE = "taste_profile"  # TurnInput.context key: the person's hard dislikes and budget
READING = "reading"  # TurnInput.context key: the person's message, read once (reading.Reading)
NAMES = "catalog_names"  # TurnInput.context key: what the catalog holds (reading.Names)
CHOICES = {
    "type": (WINE_TYPES, TYPE_ALIASES),
    "sweetness": (SWEETNESS, SWEETNESS_ALIASES),
    "body": (BODIES, BODY_ALIASES),
}
PLACES_AND_GRAPES = ("country", "region", "grape", "food")
PRICES = ("min_price", "max_price")
MAX_FILTER_WORDS = 3  # "Cabernet Sauvignon" is a grape; "French wines are served at…" is prose
MAX_QUERY_WORDS = 6
HIDDEN = (
    "guessed",
    "fired",
    "exclude_ids",
    "only_ids",
    "exclude_types",
    "exclude_countries",
    "exclude_sweetness",
    "exclude_regions",
    "order",
)
AGENT_LIMIT = 3  # wines per search the model reads: enough to choose 1 or 2 from, and each
# costs a small local model about 2.5 s of reading on 2 cores


@dataclass(frozen=True, slots=True)
class Shown:
    """A wine of the previous reply."""

    id: str
    type: str
    price: float | None


def reading_of(turn: TurnInput, names: Names) -> Reading:
    """The turn's reading (made once by the chat service), or the message read now for a
    caller that made none (MCP, tests)."""
    found = turn.context.get(READING)
    return found if isinstance(found, Reading) else read(turn.request, names)


def _short(value: Any, words: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip() if len(value.split()) <= words else None


def model_filters(
    raw: dict[str, Any], names: Names, language: str
) -> tuple[dict[str, Any], list[str]]:
    """(the model's filters that name something known, other short values for the query)."""
    kept: dict[str, Any] = {}
    extra: list[str] = []
    for key, (choices, aliases) in CHOICES.items():
        value = raw.get(key)
        choice = canonical_choice(value, choices, aliases) if isinstance(value, str) else None
        if choice:
            kept[key] = choice
    for key in PLACES_AND_GRAPES:
        value = _short(raw.get(key), MAX_FILTER_WORDS)
        known = _known(key, value, names, language) if value else None
        if known:
            kept[key] = known
        elif value:
            extra.append(value)
    for key in (*PRICES, "min_rating"):
        value = raw.get(key)
        if not isinstance(value, bool) and isinstance(value, int | float) and value > 0:
            kept[key] = float(value)
    query = _short(raw.get("query"), MAX_QUERY_WORDS)
    if query:
        extra.insert(0, query)
    return kept, extra


def _known(key: str, value: str, names: Names, language: str) -> str | None:
    """The catalog's name for a country, region, grape or food a model wrote; None when the
    catalog and the word lists know no such thing."""
    folded = fold(value)
    if key == "country":
        countries = {fold(k): v for k, v in country_names(language).items()}
        found = countries.get(folded, folded if folded in names.countries else None)
        return found if found and not found.endswith("*") else None
    if key == "grape":
        grape = GRAPE_ALIASES.get(folded, folded)
        return grape if grape in names.grapes else None
    if key == "region":
        return folded if folded in names.regions else None
    foods = {fold(p): v for p, v in _foods(language).items()}
    return foods.get(folded) or FOOD_ALIASES.get(folded)


def _foods(language: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for code in dict.fromkeys(("en", language)):
        for value, phrases in lexicon(code).kinds["food"].items():
            pairs.update({p: value for p in phrases if not p.endswith("*")})
            pairs[value] = value
    return pairs


def vetoed(key: str, value: Any, reading: Reading) -> bool:
    """Whether the person's words contradict a value the model wrote."""
    words = reading.filters
    if key in PRICES:
        # A price needs a number in the words: a model invents budgets nobody named.
        return key in words or not re.search(rf"(?<!\d){value:g}(?!\d)", reading.text)
    if key == "country" and "countries" in words:
        return value not in words["countries"]
    if key == "type" and "types" in words:
        return value not in words["types"]
    if key in words and words[key] != value:
        return True
    return value in reading.refused(key) or (key == "type" and value in reading.refused("type"))


def fire(fired: list[str] | None, rule: str, message: str, **details: Any) -> None:
    """A rule that shaped the search's arguments: logged, and named in the arguments' `fired`
    (the search tool's notes: the trace and the evaluation count it)."""
    log.info(message, extra={"event": rule, **details})
    if fired is not None:
        fired.append(rule)


def merged(
    raw: dict[str, Any], reading: Reading, names: Names, fired: list[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The model's filters less those the words veto, plus the words' own. The model's values
    that no word supports are its guesses (`guessed`): a search gives them up first, silently,
    and a notice never names them as the person's wish."""
    kept, extra = model_filters(raw, names, reading.language)
    args: dict[str, Any] = {}
    guessed = []
    for key, value in kept.items():
        if vetoed(key, value, reading):
            fire(fired, "search_value_vetoed", "a model value vetoed by the words", key=key)
            continue
        guess = reading.filters.get(key) != value and not stated(key, value, reading)
        dish_guess = key in GUESSED_FOR_A_DISH and _for_a_dish(raw, reading)
        if guess and (key == "food" or dish_guess):
            fire(
                fired,
                "search_unnamed_for_dish",
                "a food, colour, style or grape only the plan wrote, for a dish",
                key=key,
                value=str(value),
            )
            continue
        args[key] = value
        if guess:
            guessed.append(key)
    args.update(reading.filters)
    if guessed:
        args["guessed"] = guessed
    return args, extra


# A colour, style or grape is the person's to name: the words of every language read them (the
# lexicons, catalog/lexicon/colour_words.toml and sweetness_words.toml, grape names in any
# language). Guessed by a plan for a dish, they were the 1.5B model's default for dishes it could
# not place: two Champagnes for chicken satay and beef rendang, a Tawny Port and a Tokaji for
# bigos (unseen7, unseen49), Chardonnay whatever the dish (unseen51), two Rieslings for three
# beef and lamb stews (unseen52). Dropped, the dish's own pairings or the house's versatile
# picks choose the colour. So is the food itself, when the words read none (the lexicons, and
# catalog/lexicon/food_words.toml in every language): the plan's food for a dish no list knows
# was wrong in 14 of 14 such turns of unseen54's two runs (poultry for stuffed cabbage, hamin
# and a fish hot pot, dessert for a beef stew and ghormeh sabzi), and the reasons then named it.
GUESSED_FOR_A_DISH = ("type", "grape")


def _for_a_dish(raw: Mapping[str, Any], reading: Reading) -> bool:
    """Whether the words or the plan name a dish to pair with, other than a dessert the words
    name (which asks for sweet). A dessert only the plan wrote is its guess: it wrote one for
    draadjesvlees and ghormeh sabzi (unseen54), golubtsy and shakshuka (unseen49, unseen51)."""
    food = reading.filters.get("food") or raw.get("food")
    if not isinstance(food, str) or not food.strip():
        return False
    return reading.filters.get("food") != "dessert"


def stated(key: str, value: Any, reading: Reading) -> bool:
    """Whether the person's words name a value the model wrote, in any language: a country by
    any of its CLDR names in the message's language, a grape or region by its name, a price by
    its number (`vetoed` already asked for one)."""
    folded = fold(reading.text)
    if key in PRICES:
        return True
    if key == "country":
        # A name's stem: a case ending may follow ("z Hiszpanii", "из Испании").
        # Chinese and Japanese write no space before a name: "的意大利红酒".
        return any(
            re.search(
                ("" if unspaced(name) else r"(?<!\w)")
                + re.escape(name[:-1] if len(name) > STEM_AFTER else name),
                folded,
            )
            for name in territory_names(str(value), reading.language)
        )
    if key in ("grape", "region"):
        return fold(str(value)) in folded
    return False


def follow_up_bounds(reading: Reading, shown: Sequence[Shown]) -> dict[str, Any]:
    """Price bounds and exclusions that "cheaper", "pricier" and "different" imply."""
    prices = [w.price for w in shown if w.price is not None]
    bounds: dict[str, Any] = {}
    if reading.cheaper and prices:
        # Below the dearest wine shown, cheapest first: under the cheapest one when the
        # catalog has such wines, else the next best thing rather than nothing.
        bounds["max_price"] = round(max(prices) - 0.01, 2)
        bounds["order"] = "cheapest"
    if reading.pricier and prices:
        bounds["min_price"] = round(max(prices) + 0.01, 2)
    if (reading.other or reading.cheaper or reading.pricier) and shown:
        bounds["exclude_ids"] = [w.id for w in shown]
    return bounds


def priced(reading: Reading, shown: Sequence[Shown]) -> Reading:
    """How the person speaks of price in a language without a word list, read from a short
    table of its words (catalog/lexicon/price_words.toml): "还有更便宜的吗" after wines were shown
    asks for cheaper ones, "не надто дороге" for an everyday bottle. Positive evidence only: a
    plan asked to say so fills the field whatever was said (seen on the 1.5B model)."""
    if reading.language in COVERED or reading.cheaper or reading.pricier:
        return reading
    said = price_words(reading.folded)
    if said in ("cheaper", "pricier") and shown:
        return replace(reading, cheaper=said == "cheaper", pricier=said == "pricier")
    if said in ("cheap", "cheaper") and not any(k in reading.filters for k in PRICES):
        return replace(reading, filters={**reading.filters, "max_price": CHEAP})
    return reading


def coloured(reading: Reading) -> Reading:
    """The colour and sweetness a message names in a language without a word list, from short
    tables of their words (catalog/colours.py): "valkoviini" is a white and "słodkie" sweet,
    whatever the plan guessed."""
    if reading.language in COVERED:
        return reading
    named = {"type": colour_named(reading.folded), "sweetness": sweetness_named(reading.folded)}
    added = {
        key: value
        for key, value in named.items()
        if value is not None
        and key not in reading.filters
        and not (key == "type" and "types" in reading.filters)
        and value not in reading.refused(key)
    }
    return replace(reading, filters={**reading.filters, **added}) if added else reading


def dished(reading: Reading, fired: list[str] | None = None) -> Reading:
    """The food of a dish the words name that the person's language list does not know
    (catalog/dishes.py): "hachee" is beef and "fårikål" lamb, whatever the plan guessed. A
    dish whose name holds the food the list read is that dish: "Käsespätzle" is cheese, not
    the pasta of its "Spätzle"."""
    found = named(reading.folded or fold(reading.text), reading.language)
    if found is None or found.value in reading.refused("food"):
        return reading
    own = [m for m in reading.mentions if m.kind == "food"]
    inside = all(found.start <= m.start and m.end <= found.end for m in own)
    if "food" in reading.filters and not (own and inside):
        return reading
    food = str(found.value)
    fire(fired, "dish_read", "a dish read from the food table", food=food)
    filters = _dish_place_left_out({**reading.filters, "food": food}, reading, found, fired)
    return replace(reading, filters=filters)


def _dish_place_left_out(
    filters: dict[str, Any], reading: Reading, dish: Match, fired: list[str] | None
) -> dict[str, Any]:
    """A place named right after the dish is the dish's style, no wish for wine from there:
    "tochitură moldovenească" brought "nothing red from Moldova" (unseen55)."""
    places = [m for m in reading.mentions if m.kind == "country" and not m.negated]
    styled = [m for m in places if dish.start <= m.start and m.start - dish.end <= 1]
    if not styled or any(m not in styled and m.value == filters.get("country") for m in places):
        return filters
    if filters.get("country") in {m.value for m in styled}:
        fire(fired, "dish_place_left_out", "a dish's place is no wish")
        return {k: v for k, v in filters.items() if k != "country"}
    return filters


def _for_the_words(raw: dict[str, Any], reading: Reading, fired: list[str]) -> dict[str, Any]:
    """The plan's values, less its free text when the words read the dish: the search's text
    match restricts as well as ranks, and the 1.5B plan's query beside a dish was noise that
    chose the wines ("sparkling wine" for a fish soup brought a Champagne, "per__guest wine" for
    fried salmon a Dom Pérignon alone, unseen55)."""
    if "food" not in reading.filters or not any(raw.get(k) for k in ("query", "food")):
        return raw
    fire(fired, "plan_text_left_out", "the plan's free text left out beside the dish")
    return {k: v for k, v in raw.items() if k not in ("query", "food")}


def search_arguments(
    raw: dict[str, Any], turn: TurnInput, names: Names, shown: Sequence[Shown]
) -> dict[str, Any]:
    fired: list[str] = []
    reading = dished(coloured(priced(reading_of(turn, names), shown)), fired)
    args, extra = merged(_for_the_words(raw, reading, fired), reading, names, fired)
    profile = turn.context.get(PROFILE) or {}
    if not reading.subject and (reading.follow_up or not _has_subject(args)):
        args = {**reading.earlier_subject, **args}
        if not _has_subject(args) and profile.get("likes"):  # "what should I open tonight?"
            args["query"] = " ".join(profile["likes"][:3])
        if reading.cheaper or reading.pricier:
            # "Is there something cheaper?" asks for the same wine at another price: what the
            # plan guessed besides (a red, after whites) gives way to what was asked before.
            args = _kept_subject(args, reading.earlier_subject, shown)
    if not any(k in args for k in PRICES) and not (reading.pricier or reading.any_price):
        args.update(reading.earlier_price)  # a budget holds for the conversation
    bounds = follow_up_bounds(reading, shown)
    if "max_price" in bounds and "max_price" in args:
        bounds["max_price"] = min(bounds["max_price"], args["max_price"])
    args.update(bounds)
    if reading.cheaper and "min_price" not in reading.filters:
        # "Cheaper" after "15-20 euros" lifts the floor too: below a 15 € wine, a 15 € floor
        # would turn the range upside down and the search into an error.
        args.pop("min_price", None)
    args.update(exclusions(reading, args, profile))
    if args.get("type") in args.get("exclude_types", []):
        del args["type"]
    # A value the conversation or the profile gave again is no guess.
    earlier = reading.earlier_subject
    guessed = [k for k in args.pop("guessed", []) if k in args and earlier.get(k) != args[k]]
    if guessed:
        args["guessed"] = guessed
    if fired:
        args["fired"] = list(dict.fromkeys(fired))
    return _finished(args, extra, reading, profile)


def _kept_subject(
    args: dict[str, Any], earlier: Mapping[str, Any], shown: Sequence[Shown]
) -> dict[str, Any]:
    guessed = list(args.get("guessed", []))
    kept = {k: earlier.get(k, v) if k in guessed else v for k, v in args.items() if k != "guessed"}
    if len({w.type for w in shown}) == 1 and ("type" in guessed or "type" not in kept):
        kept["type"] = shown[0].type
        guessed = [k for k in guessed if k != "type"]
    still = [k for k in guessed if k not in earlier]
    return kept | ({"guessed": still} if still else {})


def _has_subject(args: dict[str, Any]) -> bool:
    return any(k in args for k in SUBJECTS)


def _finished(
    args: dict[str, Any], extra: list[str], reading: Reading, profile: dict[str, Any]
) -> dict[str, Any]:
    query = " ".join(dict.fromkeys([*([args["query"]] if args.get("query") else []), *extra]))
    if query:
        args["query"] = query[:200]
    if not any(k for k in args if k not in HIDDEN) and query_groups(reading.text):
        # Nothing else to go on: the words themselves, when they hold a word the search can
        # look for (a message in Hebrew holds none: the house's everyday picks then).
        args["query"] = reading.text[:200]
    free = reading.pricier or reading.any_price  # "forget the budget": no bound, no everyday
    budget = profile.get("max_price")
    if budget and not any(k in args for k in PRICES) and not free:
        args["max_price"] = budget  # their usual budget; relaxed like any price if need be
    if not any(k in args for k in (*PRICES, "order")) and not free:
        args["order"] = "everyday"  # no budget named: not the 650-euro icons first
    args["limit"] = AGENT_LIMIT
    return args


def exclusions(reading: Reading, args: dict[str, Any], profile: dict[str, Any]) -> dict[str, Any]:
    """What the search leaves out: what the words turn down, and the profile's hard dislikes
    unless these words ask for them ("no red" people still get red when they ask for red)."""
    asked = {
        args.get("type"),
        args.get("country"),
        *(args.get("countries") or []),
        *(args.get("types") or []),
    }
    types = set(reading.refused("type")) | set(profile.get("exclude_types", [])) - asked
    countries = set(reading.refused("country")) | set(profile.get("exclude_countries", [])) - asked
    ids = [*(args.get("exclude_ids") or []), *profile.get("exclude_ids", [])]
    found: dict[str, Any] = {
        "exclude_types": sorted(types),
        "exclude_countries": sorted(countries),
        "exclude_sweetness": sorted(reading.refused("sweetness")),
        "exclude_regions": sorted(reading.refused("region") - {args.get("region")}),
        "exclude_ids": list(dict.fromkeys(ids)),
    }
    if args.get("sweetness") in found["exclude_sweetness"]:
        del args["sweetness"]
    return {k: v for k, v in found.items() if v}


_ID = re.compile(r"\b[a-z]{1,6}-\d{1,9}\b")


def names_a_wine(text: str) -> bool:
    """Whether the words name a wine by its id ("Tell me more about … (wine id sm-059)")."""
    return bool(_ID.search(text.lower()))


def wine_ids(raw: dict[str, Any], turn: TurnInput, shown: Sequence[Shown]) -> dict[str, Any]:
    """Ids for get_wine: named in the words ("wine id sm-059"), by position in the previous
    reply ("the first one", "das zweite"), or as the model wrote them; else the wines shown."""
    reading = reading_of(turn, Names())
    named = _ID.findall(turn.request.lower())
    if named:
        return {"ids": named[:5]}
    if reading.ordinal is not None and shown:
        index = reading.ordinal if reading.ordinal < len(shown) else -1
        return {"ids": [shown[index].id]}
    written = raw.get("ids")
    if isinstance(written, list) and written and all(isinstance(i, str) for i in written):
        return {"ids": written[:5]}
    return {"ids": [w.id for w in shown[:3]]} if shown else {"ids": written or []}
