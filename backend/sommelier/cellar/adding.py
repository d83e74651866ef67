"""Bottles a person says they have ("I bought 6 bottles of Catena Malbec 2019", in any language
the model reads), for their cellar (issue 48).

The plan decides: its action `add_to_cellar` carries the wine as they named it, the count, the
vintage and the place. The catalog wine is matched as a label's words are (catalog/label_index.py):
a sure match is shown alone, else up to three that come close, each card with a button that
adds the bottles, and a button that keeps the wine as they named it (the catalog lacks it). The
reply is this tool's, from data: no answer call, and nothing in it the model wrote but the
count, vintage and place, which the buttons show before anything is stored.

Nothing is added on the model's reading alone: a model that read "I drank" as "I bought" would
fill a cellar with bottles nobody has. One press adds them (`confirm`, from bot/adding.py).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, utils
from sqlalchemy.ext.asyncio import AsyncSession

from sommelier.agent.tools import Tool, ToolOutput
from sommelier.agent.turn import TurnInput
from sommelier.catalog.label_index import LabelIndex, LabelMatch, is_sure, worth_asking
from sommelier.catalog.lexicon import fold
from sommelier.catalog.reading import Reading
from sommelier.catalog.tool_arguments import READING, reading_of
from sommelier.catalog.tools import CELLAR, UNSTORED, CatalogTools
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import SURE_MATCH, Owner, add_rows, cellar_of, label
from sommelier.db.models import Message
from sommelier.i18n.translations import N_, plural, translator

NAME = "add_to_cellar"
ADDING = "adding"  # the proposal's key in the tool's notes and in the stored reply
MAX_BOTTLES = 240  # twenty cases: more is a shop's stock, or a misread number
YEAR = re.compile(r"(?<!\d)(19\d\d|20\d\d)(?!\d)")
TYPED_AHEAD = 5  # points of rapidfuzz's score a sure match is ahead of the next
NEARLY = 80  # token_sort_ratio of a name with every word the wine's, but one word short
TYPED_CLOSE = 85  # a candidate worth showing when unsure (rapidfuzz's token_set_ratio)

ADDED = N_("Added to the cellar: {bottles} × {wine}. Bottles of it there now: {held}.")
ALREADY = N_("Already added to the cellar: {wine}.")

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "wine": {"type": "string", "maxLength": 80},
        "bottles": {"type": "integer", "minimum": 1, "maximum": MAX_BOTTLES},
        "vintage": {"type": ["integer", "null"]},
        "place": {"type": ["string", "null"], "maxLength": 40},
    },
    "required": ["wine", "bottles", "vintage", "place"],
}


# For someone with a cellar, the plan's search arguments start with where to look (catalog/
# tools.py CELLAR_PLAN: buy_from_shop | open_own_bottle), and the 1.5B model chose its own
# bottles for 7 of 7 owners who said they bought some (unseen33). These arguments start with the
# same field, so that choice is one of three at one place: adding them is the third.
# Named for the word people use: "bought" drew the model to "buy_from_shop" for 3 of 7 owners
# while this was "add_new_bottles" (unseen34).
NEW_BOTTLES = "add_bought_bottles"
OWNER_PLAN: dict[str, Any] = {
    **PLAN_SCHEMA,
    "properties": {"source": {"enum": [NEW_BOTTLES]}, **PLAN_SCHEMA["properties"]},
    "required": ["source", *PLAN_SCHEMA["required"]],
}


def adding_plan(turn: TurnInput) -> dict[str, Any] | None:
    return OWNER_PLAN if turn.context.get(CELLAR) else None


class AddArgs(BaseModel):
    wine: str = Field(min_length=2, max_length=100, description="the wine as the person names it")
    bottles: int = Field(1, ge=1, le=MAX_BOTTLES)
    vintage: int | None = Field(None, ge=1900, le=2100)
    place: str | None = Field(None, max_length=40, description="where they keep it, if said")
    language: str = "en"  # the person's, filled from their words


def proposal_text(language: str, wine: str, bottles: int, found: int, sure: bool) -> str:
    """The question above the cards, in the person's language."""
    if sure:
        said = plural(
            language,
            "Shall I add {bottles} bottle of this wine to your cellar?",
            "Shall I add {bottles} bottles of this wine to your cellar?",
            bottles,
        )
    elif found:
        said = plural(
            language,
            "Which one is it? I'll add {bottles} bottle of it to your cellar.",
            "Which one is it? I'll add {bottles} bottles of it to your cellar.",
            bottles,
        )
    else:
        said = plural(
            language,
            "“{wine}” is not in the catalog. Shall I add {bottles} bottle of it as you named it?",
            "“{wine}” is not in the catalog. Shall I add {bottles} bottles of it as you named it?",
            bottles,
        )
    return said.format(bottles=bottles, wine=wine)


def details(vintage: int | None, place: str | None) -> str:
    """ "2019 · rack B": what the bottles will be stored with besides the wine."""
    return " · ".join(str(p) for p in (vintage, place) if p)


def candidates(index: LabelIndex, named: str) -> tuple[list[LabelMatch], bool]:
    """The catalog wines a named wine may be, best first, and whether the first is sure. The
    label index finds them by their words; a name typed by a person, unlike a label, often
    leaves part of the producer out ("Catena Malbec" by Catena Zapata), so each is also scored
    as a cellar file's row is (its name alone and with its producer, cellar/store.py)."""
    asked = _typed(YEAR.sub(" ", named))
    labelled = index.match(named, limit=5)
    if is_sure(labelled):
        return labelled[:1], True
    scored = []
    for match in labelled:
        names = [_typed(n) for n in (match.name, label(match.producer, match.name))]
        typed = max(fuzz.token_sort_ratio(asked, n) for n in names)
        # "Barolo" for Pio Cesare Barolo: every word they wrote is the wine's
        within = max(fuzz.token_set_ratio(asked, n) for n in names)
        scored.append((typed, within, match))
    scored.sort(key=lambda s: (s[0], s[1], s[2].confidence), reverse=True)
    if scored and _sure(scored[0][0], scored[0][1], [typed for typed, _, _ in scored[1:2]]):
        return [scored[0][2]], True
    close = [m for _, within, m in scored if within >= TYPED_CLOSE or worth_asking([m])]
    return close[:3], False


def _typed(text: str) -> str:
    return str(utils.default_process(fold(text)))


def _sure(typed: float, within: float, next_typed: list[float]) -> bool:
    """Named as the catalog names it, or with every word the wine's and one word short
    ("Whispering Angel" for Whispering Angel Rosé; not "Barolo" for Pio Cesare Barolo); and
    well ahead of the next."""
    ahead = not next_typed or typed - next_typed[0] >= TYPED_AHEAD
    return ahead and (typed >= SURE_MATCH or (within == 100 and typed >= NEARLY))


def offered(turn: TurnInput) -> bool:
    """A plan may add bottles when the words say they have some, and for someone with a cellar
    already (in any language); never where nothing is kept (guest mode: no reply to press a
    button under). Offered to everyone in the languages no word list reads, the 1.5B model
    wrote add_to_cellar's arguments for 3 of 12 requests in them ("Ένα λευκό κρασί για ψητό
    ψάρι", unseen27): requests are far more common than bottles to add."""
    if turn.context.get(UNSTORED):
        return False
    reading = turn.context.get(READING)
    if not isinstance(reading, Reading):
        return True
    return reading.owned or bool(turn.context.get(CELLAR))


class Adding:
    def __init__(self, catalog: CatalogTools) -> None:
        self.catalog = catalog

    async def prepare(self, raw: dict[str, Any], turn: TurnInput) -> dict[str, Any]:
        """What a small model writes loosely, made usable: a year outside any vintage is none
        (the person's words may name it), a count out of range is one bottle, an empty place
        is none."""
        reading = reading_of(turn, await self.catalog.names())
        prepared = {k: v for k, v in raw.items() if k != "source"}  # the owners' choice
        # A vintage and a place are theirs to say: the model's stand only when the words have
        # them (it wrote "cellar" and "home cellar" as places nobody named, unseen32).
        years = [int(y) for y in YEAR.findall(turn.request)]
        vintage = raw.get("vintage")
        if vintage not in years:
            prepared["vintage"] = years[0] if len(years) == 1 else None
        bottles = raw.get("bottles")
        if not isinstance(bottles, int) or not 1 <= bottles <= MAX_BOTTLES:
            prepared["bottles"] = 1
        place = raw.get("place")
        said = isinstance(place, str) and place.strip() and fold(place) in fold(turn.request)
        prepared["place"] = place.strip()[:40] if said and isinstance(place, str) else None
        wine = raw.get("wine")
        if not isinstance(wine, str) or len(wine.strip()) < 2:
            prepared["wine"] = turn.request[:100]  # their own words name it, at worst
        prepared["language"] = reading.language
        return prepared

    async def run(self, args: AddArgs) -> ToolOutput:
        index = await self.catalog.label_index()
        found, sure = await asyncio.to_thread(candidates, index, args.wine)  # CPU-bound
        named = fold(" ".join([args.wine, *(label(m.producer, m.name) for m in found)]))
        if args.place and fold(args.place) in named:
            # The wine's own words are no place ("Chablis de William Fèvre": William Fèvre).
            args = args.model_copy(update={"place": None})
        intro = proposal_text(args.language, args.wine, args.bottles, len(found), sure)
        said = details(args.vintage, args.place)
        answer = {
            "response_type": "recommendation" if found else "informational",
            "intro": f"{intro}\n{said}" if said else intro,
            "wines": [{"wine_id": m.wine_id, "why": ""} for m in found],
            "closing": "",
            "guard": None,
        }
        adding = {
            "wine": args.wine,
            "bottles": args.bottles,
            "vintage": args.vintage,
            "place": args.place,
            "sure": sure,
        }
        return ToolOutput(
            {"found": [m.name for m in found], "sure": sure},
            frozenset(m.wine_id for m in found),
            labels={m.wine_id: m.name for m in found},
            notes={ADDING: adding},
            answer=answer,
        )

    def tool(self) -> Tool:
        return Tool(
            NAME,
            "the person says they have bottles (bought, got, own) to keep in their cellar: the "
            "wine as they name it, how many bottles, the vintage and where they keep it",
            AddArgs,
            self.run,
            prepare=self.prepare,
            plan_schema=PLAN_SCHEMA,
            plan_for=adding_plan,
            answers=True,
            stands_alone=True,
            offered=offered,
        )


def adding_of(notes: Any) -> dict[str, Any] | None:
    """The proposal a turn's add_to_cellar left in its notes, if it ran."""
    found = notes.get(ADDING) if isinstance(notes, Mapping) else None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True, slots=True)
class Added:
    wine: str  # as the cellar lists it
    bottles: int  # added now
    held: int  # of that wine, vintage and place, now
    vintage: int | None = None
    place: str | None = None
    again: bool = False  # pressed before: nothing added this time

    def said(self, language: str | None) -> str:
        """What the person is told, in their language."""
        t = translator(language)
        if self.again:
            return t(ALREADY).format(wine=self.wine)
        wine = " · ".join(p for p in (self.wine, details(self.vintage, self.place)) if p)
        return t(ADDED).format(bottles=self.bottles, wine=wine, held=self.held)


async def confirm(
    session: AsyncSession, owner: Owner, reply: Message, card: int, user_id: int | None
) -> Added | None:
    """A press under a proposal (`reply`, the stored reply that showed it): the bottles of its
    `card`-th wine (0: the wine as they named it) into the owner's cellar, once. The reply
    keeps that it was done, so a second press, on any of its buttons, adds nothing. None for a
    reply that proposed nothing, or a card it did not show."""
    said = (reply.reply or {}).get(ADDING)
    wine_ids = list(reply.wine_ids or [])
    if not isinstance(said, dict) or not 0 <= card <= len(wine_ids):
        return None
    if said.get("added"):
        return Added(str(said["added"]), 0, 0, again=True)
    vintage = said.get("vintage")
    row = CellarRow(
        0,
        str(said.get("wine") or "?")[:100],
        max(1, min(int(said.get("bottles") or 1), MAX_BOTTLES)),
        vintage=str(vintage) if vintage else None,
        location=said.get("place") or None,
        wine_id=wine_ids[card - 1] if card else None,
    )
    cellar = await cellar_of(session, owner)
    added = await add_rows(session, cellar, [row], user_id, "message", match_names=False)
    bottle = added.touched[0]
    name = label(bottle.producer, bottle.name)
    reply.reply = {**(reply.reply or {}), ADDING: {**said, "added": name}}
    return Added(name, row.quantity, bottle.quantity, vintage or None, row.location)


async def confirm_reply(
    session: AsyncSession, owner: Owner, reply_id: int, card: int, user_id: int | None
) -> Added | None:
    """`confirm` for the stored reply of this id (the terminal chat keeps the id it was shown)."""
    reply = await session.get(Message, reply_id)
    return await confirm(session, owner, reply, card, user_id) if reply is not None else None
