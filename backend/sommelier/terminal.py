"""`sommelier chat`: the terminal front end. Same ChatService, same database as Telegram."""

from __future__ import annotations

import asyncio
import dataclasses
import getpass
import json
import sys

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from sommelier.chat.service import Card, ChatService, TurnReply
from sommelier.db.repositories import Person

HELP = """Ask for wine the way you would ask a sommelier, for example:
  a red under 20 euros for steak
  something sparkling for a birthday
  a dry white from Germany
Commands: /help  /new (start fresh)  /history  /exit"""


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


def render(console: Console, reply: TurnReply) -> None:
    if not reply.ok:
        console.print(Text(reply.text, style="yellow"))
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


async def one_shot(service: ChatService, person: Person, message: str, as_json: bool) -> int:
    reply = await service.turn(person, message)
    if as_json:
        sys.stdout.write(reply_json(reply) + "\n")
    else:
        render(Console(), reply)
    if reply.status == "error":
        Console(stderr=True).print(
            "error: the model is unreachable; check SOMMELIER_LLM_BASE_URL and try again",
            highlight=False,
        )
        return 3
    return 0 if reply.status in ("ok", "refused") else 1


async def interactive(service: ChatService, person: Person) -> int:
    console = Console()
    console.print(Panel(HELP, title="Sommelier", border_style="red"))
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
        else:
            with console.status("[dim]thinking…[/dim]"):
                reply = await service.turn(person, line)
            render(console, reply)
