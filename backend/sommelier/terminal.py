"""`sommelier chat`: the terminal front end. Same ChatService, same database as Telegram."""

from __future__ import annotations

import asyncio
import dataclasses
import getpass
import json
import sys

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.text import Text

from sommelier.agent.parsers import Discard, DisplayEvent, TextDelta
from sommelier.chat.service import Card, ChatService, TurnReply
from sommelier.db.repositories import Person

HELP = """Ask for wine the way you would ask a sommelier, for example:
  a red under 20 euros for steak
  something sparkling for a birthday
  a dry white from Germany
Commands: /help  /new (start fresh)  /history  /retry (send the last message again)  /exit"""
RETRYABLE = ("interrupted", "error", "exhausted", "timeout", "failed", "database")


class LiveAnswer:
    """Shows the answer as it streams; a discarded attempt is wiped and replaced cleanly.
    When the turn ends the live text goes away and the validated reply is printed."""

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
            self.text.append(event.text)
        elif isinstance(event, Discard):
            self.text = Text("…", style="dim")
            self.live.update(self.text)
        self.live.refresh()

    def __enter__(self) -> LiveAnswer:
        self.live.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.live.stop()

    @property
    def shown(self) -> str:
        return self.text.plain.strip("…")


def person_for(name: str | None) -> Person:
    local = name or getpass.getuser() or "me"
    return Person(channel="cli", local_name=local, display_name=local)


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


def render(console: Console, reply: TurnReply, kept: str = "") -> None:
    if not reply.ok:
        if kept.strip():  # what the person already saw stays on screen
            console.print(Text(kept.strip()))
        hint = " (/retry to send it again)" if reply.status in RETRYABLE else ""
        console.print(Text(reply.text + hint, style="yellow"))
        return
    parts: list = []
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


async def streamed_turn(
    service: ChatService, person: Person, text: str, console: Console, stream: bool
) -> TurnReply:
    if not (stream and console.is_terminal):
        with console.status("[dim]thinking…[/dim]") if console.is_terminal else _quiet():
            reply = await service.turn(person, text)
        render(console, reply)
        return reply
    with LiveAnswer(console) as live:
        reply = await service.turn(person, text, sink=live)
    render(console, reply, kept=live.shown)
    return reply


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


async def one_shot(
    service: ChatService, person: Person, message: str, as_json: bool, stream: bool = True
) -> int:
    if as_json:
        reply = await service.turn(person, message)
        sys.stdout.write(reply_json(reply) + "\n")
    else:
        reply = await streamed_turn(service, person, message, Console(), stream)
    if reply.status == "error":
        Console(stderr=True).print(
            "error: the model is unreachable; check SOMMELIER_LLM_BASE_URL and try again",
            highlight=False,
        )
        return 3
    if reply.status == "database":
        Console(stderr=True).print(
            "error: the database cannot be reached; check SOMMELIER_DATABASE_URL and try again",
            highlight=False,
        )
        return 1
    return 0 if reply.status in ("ok", "refused") else 1


async def interactive(service: ChatService, person: Person, stream: bool = True) -> int:
    console = Console()
    console.print(Panel(HELP, title="Sommelier", border_style="red"))
    last_failed: str | None = None
    while True:
        try:
            line = (await asyncio.to_thread(console.input, "[bold red]you>[/bold red] ")).strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            return 0
        if not line:
            continue
        command = line.lower()
        if command in ("/exit", "/quit"):
            return 0
        if command == "/help":
            console.print(HELP)
        elif command == "/new":
            await service.new_conversation(person)
            console.print("[dim]Started a fresh conversation.[/dim]")
        elif command == "/history":
            for role, text in await service.history(person):
                console.print(f"[bold]{role}>[/bold] {text}", highlight=False)
        elif command == "/retry" and last_failed is None:
            console.print("[dim]Nothing to retry.[/dim]")
        else:
            text = last_failed if command == "/retry" and last_failed else line
            reply = await streamed_turn(service, person, text, console, stream)
            last_failed = text if reply.status in RETRYABLE else None
