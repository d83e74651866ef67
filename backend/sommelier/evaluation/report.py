"""The evaluation's figures per configuration, as a table and as JSON."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sommelier.evaluation.runner import TurnOutcome


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "–"


def _quantile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


@dataclass(frozen=True, slots=True)
class Summary:
    config: str
    turns: int
    wine_requests: int
    searched: int
    first_try: int
    after_repair: int
    after_compaction: int
    reset: int
    failed: int
    invented: int
    non_answers: int
    calls_per_turn: float
    prompt_tokens_per_turn: float | None
    first_call_prompt_tokens: int | None
    median_seconds: float | None
    p95_seconds: float | None
    median_first_text: float | None
    p95_first_text: float | None
    profile_respected: int = 0
    profile_judged: int = 0
    good: int = 0
    in_language: int = 0
    violated: int = 0
    contradictions: int = 0
    mended: int = 0
    capped: int = 0
    relaxed: int = 0
    stated: int = 0

    @property
    def valid(self) -> int:
        return self.first_try + self.after_repair + self.after_compaction

    def rows(self) -> list[tuple[str, str]]:
        tokens = self.prompt_tokens_per_turn
        return [
            ("wine requests that searched the catalog", _share(self.searched, self.wine_requests)),
            ("valid, grounded reply without reset", _share(self.valid, self.turns)),
            ("  at the first try", _share(self.first_try, self.turns)),
            ("  after repair", _share(self.after_repair, self.turns)),
            ("  after compaction", _share(self.after_compaction, self.turns)),
            ("reset", _share(self.reset, self.turns)),
            ("other failures (error, timeout)", _share(self.failed, self.turns)),
            ("invented wines shown", str(self.invented)),
            ("non-answers", str(self.non_answers)),
            ("model calls per turn", f"{self.calls_per_turn:.2f}"),
            ("prompt tokens per turn", "not reported" if tokens is None else f"{tokens:.0f}"),
            ("prompt tokens of a first call (system, tools, a message)",
             str(self.first_call_prompt_tokens or "–")),
            ("seconds per turn, median / p95",
             f"{_seconds(self.median_seconds)} / {_seconds(self.p95_seconds)}"),
            ("seconds to first text, median / p95",
             f"{_seconds(self.median_first_text)} / {_seconds(self.p95_first_text)}"),
            ("second conversations that respect the first's taste",
             _share(self.profile_respected, self.profile_judged)),
            ("good (grounded, an answer, nothing asked for broken)", _share(self.good, self.turns)),
            ("replies in the person's language", _share(self.in_language, self.turns)),
            ("replies whose wines break what was asked", str(self.violated)),
            ("false facts left in the prose", str(self.contradictions)),
            ("answers mended (false sentences dropped after a repair)", str(self.mended)),
            ("replies with a field cut at its length cap", str(self.capped)),
            ("wishes given up, and said", _share(self.stated, self.relaxed)),
        ]  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__} | {"valid": self.valid}


def summarize(config: str, outcomes: Sequence[TurnOutcome]) -> Summary:
    wine = [o for o in outcomes if o.wine_request]
    kinds = [o.result for o in outcomes]
    seconds = [o.seconds for o in outcomes]
    first = [o.first_text for o in outcomes if o.first_text is not None]
    tokens = [o.prompt_tokens for o in outcomes if o.prompt_tokens is not None]
    return Summary(
        config=config,
        turns=len(outcomes),
        wine_requests=len(wine),
        searched=sum(o.searched for o in wine),
        first_try=kinds.count("first try"),
        after_repair=kinds.count("after repair"),
        after_compaction=kinds.count("after compaction"),
        reset=kinds.count("reset"),
        failed=sum(k.startswith("failed") for k in kinds),
        invented=sum(o.invented for o in outcomes),
        non_answers=sum(o.non_answer is not None for o in outcomes),
        calls_per_turn=statistics.fmean(o.calls for o in outcomes) if outcomes else 0.0,
        prompt_tokens_per_turn=statistics.fmean(tokens) if tokens else None,
        first_call_prompt_tokens=next(
            (o.first_call_prompt_tokens for o in outcomes if o.first_call_prompt_tokens), None
        ),
        median_seconds=statistics.median(seconds) if seconds else None,
        p95_seconds=_quantile(seconds, 0.95),
        median_first_text=statistics.median(first) if first else None,
        p95_first_text=_quantile(first, 0.95),
        profile_respected=sum(o.respects is True for o in outcomes),
        profile_judged=sum(o.respects is not None for o in outcomes),
        good=sum(o.good for o in outcomes),
        in_language=sum(o.in_language for o in outcomes),
        violated=sum(bool(o.violations) for o in outcomes),
        contradictions=sum(o.contradictions for o in outcomes),
        mended=sum(o.mended for o in outcomes),
        capped=sum(o.capped for o in outcomes),
        relaxed=sum(o.relaxed for o in outcomes),
        stated=sum(o.relaxed and o.stated for o in outcomes),
    )


@dataclass(frozen=True, slots=True)
class LanguageRow:
    """One language's figures in one configuration."""

    language: str
    turns: int
    wine_requests: int
    searched: int
    good: int
    in_language: int
    contradictions: int
    relaxed: int
    stated: int
    median_seconds: float | None

    def cells(self) -> list[str]:
        return [
            self.language,
            str(self.turns),
            _share(self.searched, self.wine_requests),
            _share(self.good, self.turns),
            _share(self.in_language, self.turns),
            str(self.contradictions),
            _share(self.stated, self.relaxed),
            _seconds(self.median_seconds),
        ]


LANGUAGE_COLUMNS = (
    "language", "turns", "searched", "good", "in their language", "false facts",
    "wishes given up, said", "median s",
)  # fmt: skip


def by_language(outcomes: Sequence[TurnOutcome]) -> list[LanguageRow]:
    rows = []
    for language in dict.fromkeys(o.language for o in outcomes):
        mine = [o for o in outcomes if o.language == language]
        wine = [o for o in mine if o.wine_request]
        rows.append(
            LanguageRow(
                language=language,
                turns=len(mine),
                wine_requests=len(wine),
                searched=sum(o.searched for o in wine),
                good=sum(o.good for o in mine),
                in_language=sum(o.in_language for o in mine),
                contradictions=sum(o.contradictions for o in mine),
                relaxed=sum(o.relaxed for o in mine),
                stated=sum(o.relaxed and o.stated for o in mine),
                median_seconds=statistics.median(o.seconds for o in mine),
            )
        )
    return rows
