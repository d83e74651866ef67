"""Figures of a run, from its records and the judge's verdicts, per language group and per
language; and the dialogs as a person read them, for the human reading every report needs.

A reading file (YAML) holds that human verdict per turn: `dialog#turn: ok`, or the reason the
person would not be satisfied (`sv-shrimp#1: "asks back instead of answering"`). With one, the
report counts satisfied replies beside the judge's figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import yaml

from sommelier.evaluation.judge import Verdict, judge_turn
from sommelier.evaluation.sets import DialogSet, Expect, Turn

COVERED = ("de", "fr", "es", "it", "pt", "ru", "nl")  # the languages with word lists


def group_of(language: str) -> str:
    if language == "en":
        return "English"
    return "covered" if language in COVERED else "no word list"


@dataclass(slots=True)
class Judged:
    record: dict[str, Any]
    turn: Turn
    verdict: Verdict
    reading: str | None = None  # "ok" or why the person would not be satisfied

    @property
    def key(self) -> str:
        return f"{self.record['dialog']}#{self.record['turn']}"


def judge_records(records: Sequence[dict[str, Any]], sets: Sequence[DialogSet]) -> list[Judged]:
    """Each record judged in its dialog: the previous reply's cards and what was stated so far."""
    dialogs = {(s.name, d.id): d for s in sets for d in s.dialogs}
    judged: list[Judged] = []
    before: list[str] = []
    stated = Expect()
    for record in records:
        dialog = dialogs.get((record["set"], record["dialog"]))
        if dialog is None:
            continue
        if record["turn"] == 0:
            before, stated = [], Expect()
        turn = dialog.turns[record["turn"]]
        if turn.new:
            before, stated = [], Expect()
        stated = turn.expect.with_earlier(stated)
        cellar = frozenset(b.wine for b in dialog.cellar)
        verdict = judge_turn(turn, dialog.language, record, before, stated, cellar=cellar)
        judged.append(Judged(record, turn, verdict))
        if record.get("cards"):
            before = [c["id"] for c in record["cards"]]
    return judged


def with_readings(judged: Iterable[Judged], path: Path | None) -> None:
    if path is None or not path.is_file():
        return
    readings = yaml.safe_load(path.read_text("utf-8")) or {}
    for item in judged:
        found = readings.get(item.key)
        item.reading = None if found is None else str(found)


@dataclass(slots=True)
class Row:
    name: str
    turns: int = 0
    answered: int = 0
    requests: int = 0
    searched: int = 0
    grounded: int = 0
    cards_ok: int = 0
    facts: int = 0
    facts_ok: int = 0
    in_language: int = 0
    false_notices: int = 0
    invented: int = 0
    false_facts: int = 0
    judge_good: int = 0
    read: int = 0
    satisfied: int = 0
    seconds: list[float] = field(default_factory=list)
    request_seconds: list[float] = field(default_factory=list)
    answer_tokens: list[int] = field(default_factory=list)
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, read from the server's prompt cache

    def add(self, item: Judged) -> None:
        v, r = item.verdict, item.record
        self.turns += 1
        self.answered += v.answered
        if v.searched is not None:
            self.requests += 1
            self.searched += v.searched
        self.grounded += v.grounded
        self.cards_ok += not v.cards
        if v.fact_asked:
            self.facts += 1
            self.facts_ok += not v.fact
        self.in_language += v.in_language
        self.false_notices += sum(p.startswith("false notice") for p in v.notice)
        self.invented += sum(p.startswith("invented") for p in v.notice)
        self.false_facts += len(v.false_facts)
        self.judge_good += v.good
        if item.reading is not None:
            self.read += 1
            self.satisfied += item.reading == "ok"
        self.seconds.append(float(r.get("seconds") or 0))
        if item.turn.kind == "request":
            self.request_seconds.append(float(r.get("seconds") or 0))
        self.answer_tokens += [t for t in r.get("answer_tokens") or [] if t]
        if r.get("cached_tokens") is not None:  # runs stored before stop 54 have none
            self.prompt_tokens += int(r.get("prompt_tokens") or 0)
            self.cached_tokens += int(r["cached_tokens"])

    def cells(self) -> list[str]:
        def of(n: int, d: int) -> str:
            return f"{n}/{d}" if d else "–"

        return [
            self.name,
            str(self.turns),
            of(self.satisfied, self.read),
            of(self.judge_good, self.turns),
            of(self.searched, self.requests),
            of(self.grounded, self.turns),
            of(self.cards_ok, self.turns),
            of(self.facts_ok, self.facts),
            of(self.in_language, self.turns),
            str(self.false_notices),
            str(self.invented),
            str(self.false_facts),
            f"{median(self.seconds):.1f}" if self.seconds else "–",
            f"{median(self.request_seconds):.1f}" if self.request_seconds else "–",
            f"{median(self.answer_tokens):.0f}" if self.answer_tokens else "–",
            f"{100 * self.cached_tokens / self.prompt_tokens:.0f} %" if self.prompt_tokens else "–",
        ]


COLUMNS = (
    "group", "turns", "satisfied (read)", "judge: good", "requests searched", "grounded",
    "cards as asked", "facts answered", "in language", "false notices", "invented wishes",
    "false facts", "median s", "median s, requests", "answer tokens", "prompt cached",
)  # fmt: skip


def rows(judged: Sequence[Judged]) -> list[Row]:
    """One row per language group, then per language, then everything."""
    groups: dict[str, Row] = {}
    languages: dict[str, Row] = {}
    total = Row("all")
    for item in judged:
        language = item.record["language"]
        group = group_of(language)
        groups.setdefault(group, Row(group)).add(item)
        languages.setdefault(language, Row(f"  {language}")).add(item)
        total.add(item)
    ordered = [groups[g] for g in ("English", "covered", "no word list") if g in groups]
    return [*ordered, *sorted(languages.values(), key=lambda r: r.name), total]


def transcript(judged: Sequence[Judged]) -> Iterable[str]:
    """The dialogs as the person read them, with the judge's problems beside each reply."""
    dialog = None
    for item in judged:
        r = item.record
        if r["dialog"] != dialog:
            dialog = r["dialog"]
            yield f"\n=== {r['set']} / {dialog} ({r['language']}, {r.get('protocol')})"
        yield f"\n[{item.key}] {r['kind']}: {r['say']}"
        yield f"  status {r['status']}, {r.get('seconds')} s, searched {r.get('searched')}"
        for line in str(r.get("text") or "").splitlines():
            yield f"  | {line}"
        for card in r.get("cards") or []:
            yield f"  [card] {card['id']} {card['name']} — {card.get('why') or ''}"
        problems = item.verdict.problems()
        yield f"  judge: {'; '.join(problems) if problems else 'good'}"
        if item.reading is not None:
            yield f"  read: {item.reading}"


def rule_firings(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How often each rule fired: the reply's rules, and those that shaped a search's
    arguments (its tool notes' `fired`)."""
    counts: dict[str, int] = {}
    for record in records:
        tools = record.get("tools") or []
        fired = [(n, 1) for t in tools for n in (t.get("notes") or {}).get("fired", [])]
        for name, times in [*(record.get("rules") or {}).items(), *fired]:
            counts[name] = counts.get(name, 0) + int(times)
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def guard_figures(judged: Iterable[Judged]) -> tuple[int, int, int, int]:
    """(attempts refused or steered away, attempts, innocent messages so labelled, innocent
    messages): the runtime's label as the record keeps it, on the set's own kinds. An
    off-topic message is neither: its label (off_topic) is its right answer."""
    caught = attempts = alarms = innocent = 0
    for item in judged:
        labelled = bool(item.record.get("guard"))
        if item.turn.kind == "injection":
            attempts += 1
            caught += labelled
        elif item.turn.kind != "off_topic":  # steered away, an off-topic message is labelled so
            innocent += 1
            alarms += labelled
    return caught, attempts, alarms, innocent
