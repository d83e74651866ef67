"""How a turn looks in the terminal: the answer streaming live, then the validated reply with
its cards. A discarded attempt is replaced by a neutral "rethinking…", never repeated."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from sommelier.agent.parsers import Discard, DisplayEvent, Phase, TextDelta, Waiting
from sommelier.chat.labels import rating_label
from sommelier.chat.service import Card, TurnReply, Unstored
from sommelier.db.turns import InboundStatus

RETHINKING = "rethinking…"
S = InboundStatus
RETRYABLE = (
    S.interrupted, S.error, S.exhausted, S.timeout, S.failed, S.cancelled, S.busy, Unstored.database
)  # fmt: skip
KEEPS = (S.interrupted, S.timeout)  # failures after which the text already shown stays


class LiveAnswer:
    """Shows the answer as it streams, and until text comes a spinner with what the turn does
    ("waiting: 2 ahead of you, about 40 s", "searching…", "writing…"), so there is a sign of
    life several times a second. A discarded attempt is wiped and replaced by "rethinking…".
    When the turn ends the live view goes away and the validated reply is printed instead."""

    def __init__(self, console: Console) -> None:
        self.text = Text()
        self.spinner: Spinner | None = Spinner("dots", text=Text("thinking…", style="dim"))
        self.live = Live(
            self._view(),
            console=console,
            transient=True,
            auto_refresh=True,
            refresh_per_second=8,
            vertical_overflow="visible",
        )

    def _view(self) -> RenderableType:
        return Group(self.text, self.spinner) if self.spinner is not None else self.text

    def _status(self, text: str) -> None:
        self.spinner = Spinner("dots", text=Text(text, style="dim"))

    def emit(self, event: DisplayEvent) -> None:
        if isinstance(event, TextDelta):
            if self.text.plain == RETHINKING:
                self.text = Text()
            self.text.append(event.text)
            self.spinner = None
        elif isinstance(event, Discard):
            self.text = Text(RETHINKING, style="dim")
        elif isinstance(event, Waiting):
            ahead = "1 turn" if event.ahead == 1 else f"{event.ahead} turns"
            self._status(f"waiting: {ahead} ahead of you, about {event.seconds:.0f} s")
        elif isinstance(event, Phase):
            self._status(PHASES.get(event.name, f"{event.name}…"))
        self.live.update(self._view(), refresh=True)

    def __enter__(self) -> LiveAnswer:
        self.live.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.live.stop()

    @property
    def shown(self) -> str:
        return "" if self.text.plain == RETHINKING else self.text.plain


PHASES = {"admitted": "thinking…", "searching": "searching the catalog…", "writing": "writing…"}


def card_panel(index: int, card: Card, language: str | None = None) -> Panel:
    facts = Text()
    facts.append(f"{card.producer or ''}\n", style="bold")
    if card.place:
        facts.append(f"{card.place}\n")
    if card.grapes:
        facts.append(f"{', '.join(card.grapes)}\n", style="dim")
    facts.append(card.style)
    if card.price:
        facts.append(f"  ·  {card.price}", style="green")
    if card.rating is not None:
        rating = rating_label(card.rating, card.rating_count, language)
        facts.append(f"  ·  {rating}", style="yellow")
    if card.cellar:
        facts.append(f"\n{card.cellar}", style="cyan")
    if card.why.strip():
        facts.append(f"\n\n{card.why}", style="italic")
    return Panel(facts, title=f"{index}. {card.name}", title_align="left", border_style="red")


def render(
    console: Console, reply: TurnReply, kept: str = "", hint: str = "", retry: bool = True
) -> None:
    """The reply as the person reads it. Only an interrupted stream keeps what was already
    shown (the person saw it arrive); any other failure shows just its message."""
    if not reply.ok:
        if reply.status in KEEPS and kept.strip():
            # What the person saw arrive stays; the notice says it was cut.
            console.print(Text(kept.strip()))
        again = " (/retry to send it again)" if retry and reply.status in RETRYABLE else ""
        console.print(Text(reply.text + again, style="yellow"))
        if hint:
            console.print(Text(hint, style="dim"))
        return
    parts: list[Any] = []
    if reply.notice:
        parts.append(Text(reply.notice, style="italic dim"))
    if reply.intro.strip():
        parts.append(Text(reply.intro.strip()))
    parts += [card_panel(i, card, reply.language) for i, card in enumerate(reply.cards, 1)]
    if reply.closing.strip():
        parts.append(Text(reply.closing.strip()))
    console.print(Group(*parts) if parts else Text(reply.text))


def reply_json(reply: TurnReply) -> str:
    return json.dumps(
        {
            "status": reply.status,
            "text": reply.text,
            "reply": reply.reply.model_dump(mode="json") if reply.reply else None,
            "cards": [dataclasses.asdict(c) for c in reply.cards],
            "conversation_id": reply.conversation_id,
        },
        ensure_ascii=False,
        indent=2,
    )
