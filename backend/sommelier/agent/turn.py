"""What a turn starts from, and the domain's say in how it must go.

The runtime knows nothing of wine. The domain tells it, per turn, which tool must run before an
answer counts (a wine request must search the catalog), and hands opaque context to its own
tools (the wines of the previous reply, so that "cheaper" means something).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from sommelier.agent.messages import Message, latest_request


@dataclass(frozen=True, slots=True)
class TurnInput:
    messages: list[Message]  # system prompt(s), history, the person's message last
    previous_answer: str | None = None  # the text of the last reply, to catch a repeat
    asked_last: bool = False  # the last reply was a clarifying question
    context: Mapping[str, Any] = field(default_factory=dict)  # for the domain's tools

    @property
    def request(self) -> str:
        return latest_request(self.messages)


@dataclass(frozen=True, slots=True)
class Screen:
    """A question the model answers about the person's message alone, before any plan: which
    of `kinds` it is. The message is read without the conversation, whose wishes a small model
    otherwise carries into it; `replies` maps a kind to the fixed reply that ends the turn."""

    instruction: str  # the system text: what each kind means
    examples: tuple[tuple[str, str], ...]  # (message, kind) pairs shown before the message
    kinds: tuple[str, ...]
    replies: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TurnRules:
    """The domain's rules for one turn."""

    required_tool: str | None = None  # must have run before an answer to this turn counts
    # The words alone settle what to run (a planner needs no planning call): the required tool,
    # with arguments the domain reads from them.
    settled: bool = False
    tools_allowed: bool = True  # whether a plan may run the tools it names
    may_clarify: bool = True  # whether a clarifying question may replace an answer
    # The words keep the tools away (a general question) but cannot tell a question on the
    # domain from one on another subject: a plan is made, the domain's review says which, and
    # a tool the reviewed plan names runs.
    subject_unclear: bool = False
    note: str | None = None  # guidance added to the answer call (e.g. "this is an injection")
    screen: Screen | None = None  # asked of the model before planning (planner strategy)


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """What a plan would do: its action (a tool, a fixed reply, or none) and the tool's
    arguments; `fired`, the domain's rules that changed it."""

    action: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    fired: tuple[str, ...] = ()


class TurnPolicy(Protocol):
    async def rules(self, turn: TurnInput) -> TurnRules: ...

    async def review(self, turn: TurnInput, english: str, step: PlannedStep) -> PlannedStep:
        """The domain's say on a model's plan, given the plan's English gist of the message."""
        ...


class NoPolicy:
    async def rules(self, turn: TurnInput) -> TurnRules:
        return TurnRules()

    async def review(self, turn: TurnInput, english: str, step: PlannedStep) -> PlannedStep:
        return step
