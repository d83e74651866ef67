"""What a photo shows, as cards: a label's wine (with how sure the match is), the candidates
of a close call, the wines a wine list names (best first for the dish in the caption and the
person's taste), or what was read and similar wines when the catalog lacks the wine. No model
call: a photo is answered in about a second (vision/ reads and matches it)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from sommelier.catalog.label_index import LabelMatch, worth_asking
from sommelier.catalog.reading import Reading, read
from sommelier.chat.service import Card, ChatService, card_of
from sommelier.chat.taste import Taste
from sommelier.db.models import Wine
from sommelier.db.repositories import Person
from sommelier.vision.ocr import ENABLE, UnreadableImage
from sommelier.vision.photos import PhotoReader

__all__ = ["ENABLE", "PhotoAnswer", "PhotoAnswers", "Seen", "ranked"]
SIMILAR = 2
log = logging.getLogger("sommelier.photos")
LISTED_MAX = 5


class Seen(StrEnum):
    off = "off"  # the vision extra is not installed
    unreadable = "unreadable"  # no text on the photo
    not_an_image = "not_an_image"  # a corrupt file, or one too large to decode
    sure = "sure"  # a label, matched
    choose = "choose"  # a close call: candidates to choose from
    unknown = "unknown"  # read, but not a catalog wine: similar wines
    listed = "listed"  # a wine list: the wines on it the catalog knows


@dataclass(slots=True)
class PhotoAnswer:
    seen: Seen
    cards: list[Card] = field(default_factory=list)
    read: str = ""  # the text read, as one line
    confidence: float | None = None  # of a sure match
    candidates: list[LabelMatch] = field(default_factory=list)


class PhotoAnswers:
    def __init__(self, chat: ChatService, reader: PhotoReader | None = None) -> None:
        self.chat = chat
        self.reader = reader or PhotoReader(chat.sessions, chat.catalog)

    async def answer(
        self, image: bytes, caption: str, person: Person, language: str
    ) -> PhotoAnswer:
        if not self.reader.available():
            return PhotoAnswer(Seen.off)
        try:
            found = await self.reader.recognise(image)
        except UnreadableImage as exc:
            log.warning("photo refused: %s", exc, extra={"event": "photo_refused"})
            return PhotoAnswer(Seen.not_an_image)
        said = " ".join(found.text)
        if not found.text:
            return PhotoAnswer(Seen.unreadable)
        if found.is_list:
            wines = await self.chat.catalog.wines([m.wine_id for m in found.listed])
            reading = read(caption, await self.chat.catalog.names(), language=language)
            taste = await self.chat.preferences.taste_of(person)
            best = ranked(wines, reading, taste)[:LISTED_MAX]
            return PhotoAnswer(Seen.listed, [card_of(w, "", language) for w in best], said)
        if found.sure:
            match = found.matches[0]
            wines = await self.chat.catalog.wines([match.wine_id])
            cards = [card_of(w, "", language) for w in wines]
            return PhotoAnswer(Seen.sure, cards, said, match.confidence)
        maybe = worth_asking(found.matches)
        if maybe:
            return PhotoAnswer(Seen.choose, read=said, candidates=maybe)
        similar = await self.chat.catalog.search_words(said, limit=SIMILAR)
        return PhotoAnswer(Seen.unknown, [card_of(w, "", language) for w in similar], said)


def ranked(wines: Sequence[Wine], reading: Reading, taste: Taste) -> list[Wine]:
    """Wines best first for the dish in the caption and the person's taste, then rating."""
    food = reading.filters.get("food")

    def fit(wine: Wine) -> tuple[float, ...]:
        facts = {
            "type": {wine.type},
            "grape": {g.casefold() for g in wine.grapes},
            "country": {(wine.country or "").casefold()},
        }
        liked = sum(bool(facts[k] & set(v)) for k, v in taste.likes.items() if k in facts)
        disliked = sum(bool(facts[k] & set(v)) for k, v in taste.dislikes.items() if k in facts)
        pairs = food is not None and f"|{food}|" in wine.food_keys
        return (float(pairs), float(liked - 2 * disliked), wine.rating_avg or 0.0)

    return sorted(wines, key=fit, reverse=True)
