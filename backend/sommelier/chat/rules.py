"""The rules that guard a model's reply: each named, with its action, run by one loop in the
order below, and each firing recorded (on the model call, in the trace, in the evaluation).

Facts are not the rules' job: a recommendation's intro, reasons and closing are said from data
(chat/reasons.py), so the rules only guard what the model still writes itself: its one
sentence per wine, and its answer to a question. Actions:
- `mend`: the text is rewritten (markup cut, an id made a name);
- `drop`: sentences are left out (a false fact, an echo of the message);
- `replace`: the reply gives way to one said from data (the refusal, the search's wines);
- `send_back`: the model is asked again with the rule's feedback; a fallback, when the rule
  has one, is what the person sees if the repair fails too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from sommelier.agent.output import AnswerContext, ErrorKind

if TYPE_CHECKING:
    from sommelier.chat.answer import Reply

Action = Literal["mend", "drop", "replace", "send_back"]


@dataclass(frozen=True)
class Problem:
    """A rule's feedback to the model, and the reply to show if the repair fails too."""

    message: str
    kind: ErrorKind = ErrorKind.semantic
    fallback: Reply | None = None


Check = Callable[["Reply", AnswerContext], "Reply | Problem | None"]


@dataclass(frozen=True)
class Rule:
    name: str
    action: Action
    check: Check


@dataclass
class Outcome:
    reply: Reply
    problem: Problem | None
    fired: list[str]


def run(rules: Sequence[Rule], reply: Reply, context: AnswerContext) -> Outcome:
    """Each rule in order on the reply the ones before it left; the first send-back stops the
    loop. A rule fired when it changed the reply or sent it back."""
    fired: list[str] = []
    for rule in rules:
        out = rule.check(reply, context)
        if out is None or out == reply:
            continue
        fired.append(rule.name)
        if isinstance(out, Problem):
            return Outcome(reply, out, fired)
        reply = out
    return Outcome(reply, None, fired)


def mends(rules: Sequence[Rule]) -> list[Rule]:
    """The rules that change a reply without asking again: what a fallback goes through."""
    return [r for r in rules if r.action != "send_back"]
