"""A photo's text matched to the catalog.

A label shows a producer, a name, often a region and a vintage; OCR reads them with a few
letters wrong. Each word read is mended to the closest word the catalog uses (rapidfuzz), and a
wine scores by how much of its own producer and name the photo shows, each word weighted by how
rare it is in the catalog (a producer's name says more than "Reserva"), times how much of what
was read the wine explains (a label of a wine the catalog lacks shares a region word or two with
many wines, and leaves its own producer unexplained). A year that is the wine's vintage adds a
little. A wine list is many wines: each line is matched on its own.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from sommelier.catalog.lexicon import fold

WORD = re.compile(r"[^\W\d_]{3,}")
YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
MENDED = 80  # how close (0–100) a word read must be to a catalog word to count as it
COMMON = 0.05  # a word on more than this share of wines finds no candidates by itself
VINTAGE_BONUS = 0.05
SURE = 0.75  # a match this good, well ahead of the next, is the wine on the label
AHEAD = 0.1
MAYBE = 0.45  # below it a wine is not worth asking about
EXPLAINED_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class LabelWine:
    """What a label can show of a catalog wine."""

    wine_id: str
    name: str
    producer: str | None = None
    region: str | None = None
    vintage: str | None = None


@dataclass(frozen=True, slots=True)
class LabelMatch:
    wine_id: str
    name: str
    producer: str | None
    vintage: str | None
    confidence: float  # 0–1


@dataclass(slots=True)
class Recognition:
    """What a photo showed: the text read, the best matches, and whether the best is sure."""

    text: list[str]
    matches: list[LabelMatch] = field(default_factory=list)
    sure: bool = False
    listed: list[LabelMatch] = field(default_factory=list)  # a wine list: each wine on it

    @property
    def is_list(self) -> bool:
        return len(self.listed) > 1


def words(text: str) -> list[str]:
    return WORD.findall(fold(text))


class LabelIndex:
    """The catalog's wines by the words on their labels."""

    def __init__(self, wines: Iterable[LabelWine]) -> None:
        self.wines: list[LabelWine] = []
        self.own: list[frozenset[str]] = []  # producer and name words, per wine
        self.place: list[frozenset[str]] = []  # region words, per wine
        postings: dict[str, list[int]] = defaultdict(list)
        for wine in wines:
            own = frozenset(words(f"{wine.producer or ''} {wine.name}"))
            place = frozenset(words(wine.region or "")) - own
            for word in own | place:
                postings[word].append(len(self.wines))
            self.wines.append(wine)
            self.own.append(own)
            self.place.append(place)
        count = max(1, len(self.wines))
        self.postings = dict(postings)
        self.idf = {w: math.log(1 + count / len(ids)) for w, ids in postings.items()}
        self.vocabulary = list(self.postings)
        self.common = max(3, int(COMMON * count))

    def __len__(self) -> int:
        return len(self.wines)

    def mended(self, text: str) -> dict[str, float]:
        """Catalog word → how close the photo came to it (0–1), for each word read."""
        found: dict[str, float] = {}
        for word in set(words(text)):
            if word in self.postings:
                found[word] = 1.0
                continue
            for near, score, _ in process.extract(
                word, self.vocabulary, scorer=fuzz.ratio, limit=2, score_cutoff=MENDED
            ):
                found[near] = max(found.get(near, 0.0), score / 100)
        return found

    def match(self, text: str, limit: int = 3) -> list[LabelMatch]:
        """The wines the text most likely shows, best first."""
        seen = self.mended(text)
        candidates = {
            i for w in seen if len(self.postings[w]) <= self.common for i in self.postings[w]
        }
        read = words(text)
        years = set(YEAR.findall(text))
        scored = sorted(((self._score(i, seen, read, years), i) for i in candidates), reverse=True)[
            :limit
        ]
        return [self._match(i, score) for score, i in scored if score > 0]

    def _score(self, i: int, seen: dict[str, float], read: list[str], years: set[str]) -> float:
        own, place = self.own[i], self.place[i]
        weight = sum(self.idf[w] for w in own) or 1.0
        covered = sum(self.idf[w] * seen.get(w, 0.0) for w in own) / weight
        explained = self._explained(own | place, seen, read)
        score = covered * (1 - EXPLAINED_WEIGHT + EXPLAINED_WEIGHT * explained)
        if self.wines[i].vintage in years:
            score += VINTAGE_BONUS
        return min(1.0, score)

    def _explained(self, mine: frozenset[str], seen: dict[str, float], read: list[str]) -> float:
        """The share of the words read (rare ones counting more) that are this wine's."""
        rarest = max(self.idf.values(), default=1.0)
        total = hit = 0.0
        for word in dict.fromkeys(read):
            near = [w for w in mine if w == word or fuzz.ratio(w, word) >= MENDED]
            weight = self.idf.get(word, rarest)  # a word the catalog lacks: its own producer?
            total += weight
            hit += weight if near or (word in seen and word in mine) else 0.0
        return hit / total if total else 0.0

    def _match(self, i: int, score: float) -> LabelMatch:
        wine = self.wines[i]
        return LabelMatch(wine.wine_id, wine.name, wine.producer, wine.vintage, round(score, 3))

    def recognise(self, lines: Sequence[str]) -> Recognition:
        """A label (all lines one wine) or a wine list (a wine per line)."""
        found = Recognition(text=list(lines), matches=self.match(" ".join(lines)))
        found.sure = is_sure(found.matches)
        if len(lines) > 2:
            listed: dict[str, LabelMatch] = {}
            for line in lines:
                best = self.match(line, limit=2)
                if is_sure(best) and best[0].wine_id not in listed:
                    listed[best[0].wine_id] = best[0]
            found.listed = list(listed.values()) if len(listed) > 1 else []
        return found


def is_sure(matches: Sequence[LabelMatch]) -> bool:
    if not matches or matches[0].confidence < SURE:
        return False
    return len(matches) == 1 or matches[0].confidence - matches[1].confidence >= AHEAD


def worth_asking(matches: Sequence[LabelMatch]) -> list[LabelMatch]:
    """The matches close enough to ask "is it one of these?" about."""
    return [m for m in matches if m.confidence >= MAYBE]
