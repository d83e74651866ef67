"""Answers to what people ask after a recommendation, from data: how cold to serve it, how long
it keeps once opened, whether to decant it, which glass, how long it ages (a sourced table,
data/knowledge.toml), and which of the wines shown is the lightest, the fullest or the best
with a dish (their catalog rows). Rendered by translated templates in the person's language,
so a small model cannot get a temperature wrong: the tool's answer is the reply, and no answer
call is made.

The topic is the plan's decision (the `wine_knowledge` tool, in any language the model speaks);
the words of data/knowledge.toml add it with positive evidence when the message names one and
no wine to search for.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from sommelier.agent.tools import Tool, ToolOutput
from sommelier.agent.turn import TurnInput
from sommelier.catalog.lexicon import Phrases, fold
from sommelier.catalog.prices import NUMBER, in_digits
from sommelier.catalog.reading import Reading, read
from sommelier.catalog.tool_arguments import reading_of
from sommelier.catalog.tools import PREVIOUS, CatalogTools
from sommelier.catalog.vocabulary import style_key
from sommelier.chat.labels import FOODS
from sommelier.db.models import Wine
from sommelier.i18n.translations import N_, money, number, translator

Topic = Literal[
    "serving_temperature", "keeps_open", "decanting", "glass", "ageing", "lightest", "fullest",
    "driest", "sweetest", "oak", "best_with_food", "cheapest", "priciest", "label_term",
    "per_guest",
]  # fmt: skip
GENERAL = ("red", "white", "sparkling")  # a question about "wine", no style named
TOPICS: tuple[str, ...] = get_args(Topic)
TABLE_TOPICS = ("serving_temperature", "keeps_open", "decanting", "glass", "ageing")
BODY = {"very light": 1, "light": 2, "medium": 3, "full": 4, "very full": 5}
SWEETNESS = {"dry": 1, "off-dry": 2, "medium-sweet": 3, "sweet": 4}
# Which way each comparison looks: the row's scale and whether the least or the most wins.
RANKED = {
    "lightest": (BODY, 1),
    "fullest": (BODY, -1),
    "driest": (SWEETNESS, 1),
    "sweetest": (SWEETNESS, -1),
}
# Price comparisons: the row's price, and whether the least or the most wins.
PRICED = {"cheapest": 1, "priciest": -1}
# How a level is said (the card labels' own texts).
LEVEL_NAMES = {
    "very light": N_("very light body"),
    "light": N_("light body"),
    "medium": N_("medium body"),
    "full": N_("full body"),
    "very full": N_("very full body"),
    "dry": N_("dry"),
    "off-dry": N_("off-dry"),
    "medium-sweet": N_("medium-sweet"),
    "sweet": N_("sweet"),
}
# Words of the catalog's (English) notes that say a wine saw oak.
OAK_WORDS = ("oak", "barrel", "barrique", "cask")
NAME = "wine_knowledge"

STYLE_NAMES = {
    "red": N_("red wine"),
    "white": N_("white wine"),
    "rosé": N_("rosé"),
    "sparkling": N_("sparkling wine"),
    "dessert": N_("dessert wine"),
    "fortified": N_("fortified wine"),
}
SENTENCES = {
    "serving_temperature": N_("Serve {name} at {low}–{high} °C."),
    "keeps_open": N_("Once opened, {name} keeps {low}–{high} days, recorked in the fridge."),
    "decanting": N_("Decant {name} {low}–{high} minutes before serving."),
    "no_decanting": N_("{name} needs no decanting."),
    "glass": N_("For {name}: {glass}."),
    "ageing": N_("{name} is at its best {low}–{high} years after the vintage."),
    "ready": N_("{name} is ready to drink when sold."),
    "lightest": N_("The lightest of these is {name}."),
    "fullest": N_("The fullest of these is {name}."),
    "driest": N_("The driest of these is {name}."),
    "sweetest": N_("The sweetest of these is {name}."),
    "one_level": N_("The catalog lists {name} as {value}."),
    "same_body": N_("The catalog gives all of these the same body: {value}."),
    "same_sweetness": N_("The catalog gives all of these the same sweetness: {value}."),
    "cheapest": N_("The least expensive of these is {name}, at {price}."),
    "priciest": N_("The most expensive of these is {name}, at {price}."),
    "same_price": N_("These all cost the same: {price}."),
    "no_price": N_("The catalog gives no price for these."),
    "oak": N_("The catalog's notes on {name} mention oak."),
    "no_oak": N_("The catalog's notes on {name} say nothing of oak."),
    "best_with_food": N_("With {food}, {name} is the one the catalog pairs with it."),
    "none_with_food": N_("None of these is listed with {food}."),
    "closest_food": N_(
        "None of these is listed with {food}; {name} comes closest: it goes with {other}."
    ),
    "nothing_shown": N_("Tell me which wine you mean, and I'll tell you."),
    "still": N_("On a still wine's label, «{term}» means {level}: {sugar}."),
    "sparkling": N_("On a sparkling wine's label, «{term}» means {level}: {sugar}."),
    "undefined": N_("«{term}» is not defined by law; producers use it for wines that are {level}."),
    "unknown_term": N_(
        "I can tell you what the sugar words on a label mean, such as brut, trocken or demi-sec."
    ),
    "per_guest": N_(
        "A 75 cl bottle pours {glasses} glasses: for a toast, a bottle serves {glasses} guests; "
        "for a dinner, plan half a bottle per guest."
    ),
    "guests": N_("Bottles for {guests} guests: {toast} for a toast, {bottles} for a dinner."),
}
# How much sugar a label word allows (g/l).
SUGAR = {
    "up_to": N_("up to {high} g of sugar per litre"),
    "wider": N_("up to {high} g of sugar per litre ({wider} g if its acidity is high)"),
    "between": N_("{low}–{high} g of sugar per litre"),
    "over": N_("more than {low} g of sugar per litre"),
}
GLASSES = {
    "tulip": N_("a tulip glass or a flute"),
    "white": N_("a white-wine glass"),
    "burgundy": N_("a wide Burgundy glass"),
    "bordeaux": N_("a large Bordeaux glass"),
    "small": N_("a small dessert-wine glass"),
}


class KnowledgeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    topic: Topic = Field(description="What the person asks about the wine(s).")
    type: str | None = Field(default=None, description="A style when no wine is in view.")
    food: str | None = Field(default=None, description="The dish, for best_with_food.")
    grape: str | None = Field(
        default=None, description="A grape or appellation when no wine is in view."
    )
    term: str | None = Field(default=None, description="The label word, for label_term.")
    # Set by the runtime: the wines in view, the number of guests and the person's language.
    ids: SkipJsonSchema[list[str]] = Field(default_factory=list)
    terms: SkipJsonSchema[list[str]] = Field(default_factory=list)  # the label words named
    guests: SkipJsonSchema[int | None] = None
    language: SkipJsonSchema[str] = "en"


PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "topic": {"enum": list(TOPICS)},
        "type": {"enum": list(STYLE_NAMES)},
        "food": {"type": "string", "maxLength": 24},
        "grape": {"type": "string", "maxLength": 24},
        "term": {"type": "string", "maxLength": 24},
    },
    "required": ["topic"],
    "additionalProperties": False,
}


@cache
def _data() -> dict[str, Any]:
    text = resources.files("sommelier.chat").joinpath("data/knowledge.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def _words(table: str) -> dict[str, tuple[str, ...]]:
    """A table's phrases by key, folded once (they are looked for in every message)."""
    return {str(k): tuple(fold(p) for p in phrases) for k, phrases in _data()[table].items()}


def asked_topic(text: str) -> str | None:
    """The topic the words name ("wie kalt…", "温度", "how long does it keep"), or None. An
    unopened bottle's keeping is its ageing; a comparative counts beside a word asking which
    ("welcher der beiden ist kräftiger?"), since without one it asks for other wines
    ("something lighter")."""
    folded = fold(text)
    found = _found(folded, _words("words"))
    if found in ("keeps_open", None) and _found(folded, _words("unopened")):
        return "ageing"
    if found is None and _found(folded, _words("means")) and label_term(text):
        return "label_term"  # "was bedeutet halbtrocken?"
    if found is None and _found(folded, _words("which")):
        return _found(folded, _words("comparative"))
    return found


def level_asked(reading: Reading) -> str | None:
    """The comparison a question about one wine shown asks by its words of sweetness or body
    ("is the first one very dry?": driest), or None when it names no level or no wine."""
    if reading.ordinal is None:
        return None
    sweetness, body = reading.filters.get("sweetness"), reading.filters.get("body")
    if sweetness is not None:
        return "sweetest" if sweetness in ("sweet", "medium-sweet") else "driest"
    if body is not None:
        return "fullest" if body in ("full", "very full") else "lightest"
    return None


def _found(folded: str, table: dict[str, tuple[str, ...]]) -> str | None:
    return next((k for k, words in table.items() if any(w in folded for w in words)), None)


@cache
def _terms() -> dict[str, Phrases]:
    """The label words of each style (still, sparkling, undefined) → the row's name, as whole
    words; the longest wins ("brut nature" over "brut"), "полусух*" is a stem."""
    table = _data()["label_terms"]
    return {
        style: Phrases.of((word, name) for name, row in rows.items() for word in row["words"])
        for style, rows in table.items()
    }


MAX_TERMS = 2  # "the difference between extra trocken and brut"
_AROUND = "\"'«»“”„‘’?!.,;:¿¡？！。"  # around a word, not of it


def label_term(text: str) -> str | None:
    """The first of the label's sugar words the text names (`label_terms`), or None."""
    return next(iter(label_terms(text)), None)


def label_terms(text: str) -> list[str]:
    """The label's sugar words the text names, in their order, as the person wrote them
    ("Halbtrocken", "полусухое", "süß")."""
    folded = fold(text)
    spans = sorted({(m.start, m.end) for p in _terms().values() for m in p.find(folded)})
    kept = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    said = [_as_written(text, folded, start, end) for start, end in kept]
    return list(dict.fromkeys(said))[:MAX_TERMS]


def _as_written(text: str, folded: str, start: int, end: int) -> str:
    """The words of `text` at a span of its folded form: the same slice when folding kept the
    length, else the same words by their count ("süß" folds to "suss")."""
    if len(text) == len(folded):
        return text[start:end]
    joined = start > 0 and not folded[start - 1].isspace()  # "'süß'": its quote is before it
    before = len(folded[:start].split()) - joined
    count = len(folded[start:end].split())
    words = text.split()[before : before + count]
    return " ".join(words).strip(_AROUND) or folded[start:end]


def _meanings(term: str) -> list[tuple[str, dict[str, Any]]]:
    """(style, row) for each style whose labels use the word: "demi-sec" is one thing on a
    still wine and another on a sparkling one."""
    folded = fold(term)
    found = []
    for style, phrases in _terms().items():
        match = next(phrases.find(folded), None)
        if match is not None and (match.start, match.end) == (0, len(folded)):
            found.append((style, _data()["label_terms"][style][match.value]))
    return found


def fact(topic: str, key: str, grapes: Sequence[str] = ()) -> Any:
    """The table's value for a style (a grape's own row first)."""
    table = _data()[topic]
    for grape in grapes:
        if f"grape {fold(grape)}" in table:
            return table[f"grape {fold(grape)}"]
    return table.get(key)


def render(args: KnowledgeArgs, wines: Sequence[Wine], grape_style: Wine | None = None) -> str:
    """The answer, in the person's language. `grape_style`: a catalog wine of the grape or
    appellation asked about when no wine is in view ("which glass for Pinot Noir?"), whose row
    sets the style and whose grapes the grape rows."""
    t = translator(args.language)
    if args.topic == "label_term":
        return _label(args, wines)
    if args.topic == "per_guest":
        return _per_guest(args)
    if args.topic in TABLE_TOPICS:
        subjects = [(w.name, style_key(w.type, w.body, w.sweetness), w.grapes) for w in wines]
        styles = [args.type] if args.type in STYLE_NAMES else list(GENERAL)
        if not subjects and grape_style is not None and args.grape:
            key = style_key(grape_style.type, grape_style.body, grape_style.sweetness)
            subjects = [(args.grape.title(), key, [args.grape, *grape_style.grapes])]
        if not subjects:  # no wine in view: the style asked about, or the usual three
            subjects = [(t(STYLE_NAMES[s]), style_key(s, None, None), []) for s in styles]
        return " ".join(_table_sentence(args.topic, *s, args.language) for s in subjects)
    if not wines:
        return t(SENTENCES["nothing_shown"])
    if args.topic == "oak":
        return " ".join(_oak(w, args.language) for w in wines)
    if args.topic in PRICED:
        return _price_comparison(args, wines)
    return _comparison(args, wines)


def _label(args: KnowledgeArgs, wines: Sequence[Wine]) -> str:
    """What each sugar word asked about allows, for the style asked about or in view (both,
    when neither says: "demi-sec" is off-dry on a still wine and medium-sweet on a sparkling
    one)."""
    t = translator(args.language)
    terms = args.terms or ([args.term] if args.term else [])
    said = [_term_sentences(term.strip(), args, wines) for term in terms]
    return " ".join(s for s in said if s) or t(SENTENCES["unknown_term"])


def _term_sentences(term: str, args: KnowledgeArgs, wines: Sequence[Wine]) -> str:
    t = translator(args.language)
    meanings = _meanings(term)
    styles = {w.type for w in wines} or ({args.type} if args.type else set())
    if styles and len(meanings) > 1:
        sparkling = styles == {"sparkling"}
        chosen = [(s, r) for s, r in meanings if (s == "sparkling") == sparkling]
        meanings = chosen or meanings
    sentences = []
    for style, row in meanings:
        level = t(LEVEL_NAMES[row["level"]])
        if style == "undefined":
            sentences.append(t(SENTENCES["undefined"]).format(term=term, level=level))
            continue
        sugar = _sugar(row, args.language)
        sentences.append(t(SENTENCES[style]).format(term=term, level=level, sugar=sugar))
    return " ".join(sentences)


def _sugar(row: dict[str, Any], language: str) -> str:
    t = translator(language)
    said = {k: number(row[k], language) for k in ("low", "high", "wider") if k in row}
    if "high" not in row:
        return t(SUGAR["over"]).format(**said)
    if "wider" in row:
        return t(SUGAR["wider"]).format(**said)
    if "low" in row:
        return t(SUGAR["between"]).format(**said)
    return t(SUGAR["up_to"]).format(**said)


def _per_guest(args: KnowledgeArgs) -> str:
    """The party rules of thumb (a glass a guest for a toast, half a bottle for a dinner), and
    the bottles for the guests named."""
    t = translator(args.language)
    table = _data()["per_guest"]
    glasses = table["glasses_per_bottle"]
    said = t(SENTENCES["per_guest"]).format(glasses=number(glasses, args.language))
    if args.guests:
        toast = math.ceil(args.guests / glasses)
        bottles = math.ceil(args.guests * table["bottles_per_guest"])
        counted = t(SENTENCES["guests"]).format(guests=args.guests, toast=toast, bottles=bottles)
        said = f"{said} {counted}"
    return said


def _price_comparison(args: KnowledgeArgs, wines: Sequence[Wine]) -> str:
    """The row's prices, in the catalog's most common currency (a price in another one is
    not comparable by its number); a tie is said as a tie, not as a winner."""
    t = translator(args.language)
    priced = [(w, w.price) for w in wines if w.price is not None]
    if not priced:
        return t(SENTENCES["no_price"])
    currencies = [w.currency for w, _ in priced]
    currency = max(set(currencies), key=currencies.count)
    priced = [(w, p) for w, p in priced if w.currency == currency]
    best, price = min(priced, key=lambda pair: PRICED[args.topic] * pair[1])
    said = money(price, currency, args.language)
    if len(priced) > 1 and len({p for _, p in priced}) == 1:
        return t(SENTENCES["same_price"]).format(price=said)
    return t(SENTENCES[args.topic]).format(name=best.name, price=said)


def _oak(wine: Wine, language: str) -> str:
    said = fold(wine.description or "")
    oaked = any(word in said for word in OAK_WORDS)
    return translator(language)(SENTENCES["oak" if oaked else "no_oak"]).format(name=wine.name)


def _table_sentence(topic: str, name: str, key: str, grapes: Sequence[str], language: str) -> str:
    t = translator(language)
    value = fact(topic, key, grapes)
    if topic == "glass":
        return t(SENTENCES["glass"]).format(name=name, glass=t(GLASSES[str(value)]))
    low, high = (number(v, language) for v in value)
    if topic == "decanting" and value == [0, 0]:
        return _capital(t(SENTENCES["no_decanting"]).format(name=name))
    if topic == "ageing" and value == [0, 0]:
        return _capital(t(SENTENCES["ready"]).format(name=name))
    return _capital(t(SENTENCES[topic]).format(name=name, low=low, high=high))


def _comparison(args: KnowledgeArgs, wines: Sequence[Wine]) -> str:
    t = translator(args.language)
    if args.topic in RANKED:
        scale, sign = RANKED[args.topic]
        middle = 3 if scale is BODY else 1
        levels = {_level(w, scale) for w in wines}
        if len(wines) == 1 and None not in levels:
            level = str(levels.pop())  # "is the first one very dry?": what its row says
            value = t(LEVEL_NAMES.get(level, level))
            return t(SENTENCES["one_level"]).format(name=wines[0].name, value=value)
        if len(wines) > 1 and len(levels) == 1 and None not in levels:
            # A tie named as a winner is a claim the rows do not make.
            alike = SENTENCES["same_body" if scale is BODY else "same_sweetness"]
            level = str(levels.pop())
            return t(alike).format(value=t(LEVEL_NAMES.get(level, level)))
        best = min(wines, key=lambda w: sign * scale.get(_level(w, scale) or "", middle))
        return t(SENTENCES[args.topic]).format(name=best.name)
    food = fold(args.food or "")
    label = t(FOODS.get(food, food or "?"))
    fitting = [w for w in wines if food and any(food in fold(f) for f in w.food_pairings)]
    if fitting:
        return t(SENTENCES["best_with_food"]).format(food=label, name=fitting[0].name)
    near = _nearest(food, wines)
    if near is None:
        return _capital(t(SENTENCES["none_with_food"]).format(food=label))
    wine, other = near
    said = t(SENTENCES["closest_food"])
    return _capital(said.format(food=label, name=wine.name, other=t(FOODS.get(other, other))))


def _guests(reading: Reading) -> int | None:
    """The number of guests the question names ("wine for 40 people"), or the last message
    before it ("a garden party for 30", then "how many bottles?"): a whole number of two or
    more that is not the message's budget."""
    earlier = [(t, read(t, language=reading.language).price) for t in reading.earlier_texts]
    for text, price in [(reading.text, reading.price), *reversed(earlier)]:
        budget = {price.low, price.high} if price is not None else set()
        said = in_digits(text, reading.language)
        counts = [int(m.group(1)) for m in NUMBER.finditer(said) if m.group(1).isdigit()]
        found = next((n for n in counts if n >= 2 and n not in budget), None)
        if found is not None:
            return found
    return None


def _varietal(grape: str, wines: Sequence[Wine]) -> Wine | None:
    """The wine whose row best shows a grape's usual style: one made of it alone, then a still
    one (a Pinot Noir is a red before it is a Champagne)."""
    alone = [w for w in wines if [fold(g) for g in w.grapes] == [fold(grape)]]
    still = [w for w in wines if w.type in ("red", "white", "rosé")]
    return next(iter(alone + still + list(wines)), None)


def _level(wine: Wine, scale: dict[str, int]) -> str | None:
    return wine.body if scale is BODY else wine.sweetness


def _nearest(food: str, wines: Sequence[Wine]) -> tuple[Wine, str] | None:
    """A wine shown that is paired with a dish of the same kind as `food` (lamb: beef)."""
    kinds = [set(k) for k in _data()["food_kinds"].values() if food in k]
    for wine in wines:
        for paired in (fold(f) for f in wine.food_pairings):
            if any(paired in kind for kind in kinds):
                return wine, paired
    return None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


class Knowledge:
    """The `wine_knowledge` tool over the catalog's rows."""

    def __init__(self, catalog: CatalogTools) -> None:
        self.catalog = catalog

    async def prepare(self, raw: dict[str, Any], turn: TurnInput) -> dict[str, Any]:
        """The topic the words name wins over a model's; the wines in view, the style and
        dish the words name, and the person's language come from the turn."""
        reading = reading_of(turn, await self.catalog.names())
        filters = reading.filters
        shown = list(turn.context.get(PREVIOUS) or [])
        topic = asked_topic(turn.request) or level_asked(reading) or raw.get("topic")
        if topic is None and filters.get("food"):
            topic = "best_with_food"
        prepared: dict[str, Any] = {
            "topic": topic if topic in TOPICS else "serving_temperature",
            "ids": shown,
            "language": reading.language,
        }
        if reading.ordinal is not None and shown and prepared["topic"] not in PRICED:
            # "How long does the second one keep?", "is the first one dry?": that wine alone.
            index = reading.ordinal if reading.ordinal < len(shown) else -1
            prepared["ids"] = [shown[index]]
        style = filters.get("type") or raw.get("type")
        if style in STYLE_NAMES:
            prepared["type"] = style
            prepared["ids"] = [] if "type" in filters else prepared["ids"]
        food = filters.get("food") or raw.get("food")
        if isinstance(food, str):
            prepared["food"] = food
        term = raw.get("term")
        if prepared["topic"] == "label_term":
            prepared["terms"] = label_terms(turn.request) or (
                [term] if isinstance(term, str) else []
            )
        if prepared["topic"] == "per_guest":
            prepared["guests"] = _guests(reading)
        # A grape or an appellation named with no wine in view: "which glass for Pinot Noir?",
        # "how many years can a Barolo age?".
        named = filters.get("grape") or filters.get("region") or raw.get("grape")
        if isinstance(named, str) and named:
            prepared["grape"] = named
            own = "grape" in filters or "region" in filters
            prepared["ids"] = [] if own else prepared["ids"]
        return prepared

    async def run(self, args: KnowledgeArgs) -> ToolOutput:
        wines = await self.catalog.wines(args.ids) if args.ids else []
        of_grape = None
        if not wines and args.grape and args.topic in TABLE_TOPICS:
            of_grape = _varietal(args.grape, await self.catalog.search_words(args.grape, limit=5))
        text = render(args, wines, of_grape)
        answer: dict[str, Any] = {
            "response_type": "informational",
            "intro": text,
            "wines": [],
            "closing": "",
            "guard": None,
        }
        return ToolOutput(
            {"topic": args.topic, "answer": text},
            text=text,
            notes={"topic": args.topic},
            answer=answer,
        )

    def tool(self) -> Tool:
        return Tool(
            NAME,
            "facts about the wines shown, a style or a grape: serving temperature, how long an "
            "opened bottle keeps, decanting, glass, ageing, the lightest, fullest, driest or "
            "sweetest of them, whether one is oaked, the best with a dish, a label's sugar "
            "word (brut, trocken), wine per guest",
            KnowledgeArgs,
            self.run,
            prepare=self.prepare,
            plan_schema=PLAN_SCHEMA,
            answers=True,
        )
