"""How a turn looks in the terminal: the answer streaming live, then the validated reply with
its cards. A discarded attempt is replaced by a neutral "rethinking…", never repeated."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.text import Text

from sommelier.agent.parsers import Discard, DisplayEvent, TextDelta
from sommelier.chat.service import Card, TurnReply

RETHINKING = "rethinking…"
RETRYABLE = ("interrupted", "error", "exhausted", "timeout", "failed", "database", "cancelled")


class LiveAnswer:
    """Shows the answer as it streams; a discarded attempt is wiped and replaced by
    "rethinking…". When the turn ends the live text goes away and the validated reply is
    printed in its place."""

    def __init__(self, console: Console) -> None:
        self.text = Text()
        self.live = Live(
            self.text,
            console=console,
            transient=True,
            auto_refresh=False,
            vertical_overflow="visible",
        )

    def emit(self, event: DisplayEvent) -> None:
        if isinstance(event, TextDelta):
            if self.text.plain == RETHINKING:
                self.text = Text()
                self.live.update(self.text)
            self.text.append(event.text)
        elif isinstance(event, Discard):
            self.text = Text(RETHINKING, style="dim")
            self.live.update(self.text)
        self.live.refresh()

    def __enter__(self) -> LiveAnswer:
        self.live.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.live.stop()

    @property
    def shown(self) -> str:
        return "" if self.text.plain == RETHINKING else self.text.plain


def card_panel(index: int, card: Card) -> Panel:
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
        facts.append(f"  ·  ★ {card.rating:.1f} ({card.rating_count:,})", style="yellow")
    facts.append(f"\n\n{card.why}", style="italic")
    return Panel(facts, title=f"{index}. {card.name}", title_align="left", border_style="red")


def render(console: Console, reply: TurnReply, kept: str = "", hint: str = "") -> None:
    """The reply as the person reads it. Only an interrupted stream keeps what was already
    shown (the person saw it arrive); any other failure shows just its message."""
    if not reply.ok:
        if reply.status == "interrupted" and kept.strip():
            console.print(Text(kept.strip()))
        retry = " (/retry to send it again)" if reply.status in RETRYABLE else ""
        console.print(Text(reply.text + retry, style="yellow"))
        if hint:
            console.print(Text(hint, style="dim"))
        return
    parts: list[Any] = []
    if reply.intro.strip():
        parts.append(Text(reply.intro.strip()))
    parts += [card_panel(i, card) for i, card in enumerate(reply.cards, 1)]
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
