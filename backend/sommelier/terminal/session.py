"""The interactive terminal chat and the one-shot `--message`.

Logs never interleave with the conversation: they go to a file (named in /help) unless
`--verbose`. Ctrl-C cancels the running turn (stored as cancelled) and returns to the prompt; at
the prompt, Ctrl-C or Ctrl-D exits. Commands are handled here; an unknown one never reaches the
model.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from sommelier.cellar.adding import confirm_reply
from sommelier.cellar.report import render as cellar_text
from sommelier.cellar.store import bottles_held, cellar_of, forget, held, owner_of
from sommelier.chat.service import ChatService, TurnReply, friendly
from sommelier.db.repositories import Person
from sommelier.db.session import DATABASE_ERRORS
from sommelier.terminal.render import RETRYABLE, LiveAnswer, render, reply_json

CHANNEL = "cli"
PROMPT = "[bold red]you>[/bold red] "
EXAMPLES = """Ask for wine the way you would ask a sommelier, for example:
  a red under 20 euros for steak
  something sparkling for a birthday
  a dry white from Germany"""
COMMANDS = """Commands: /help  /new (start fresh)  /history  /sessions  /load N  /retry  /exit
  /good, /bad [reason] (rate my last reply)  /profile (what I remember)  /forget
  /cellar (your bottles; `sommelier cellar import FILE` adds them, or tell me what you bought)
  /forget cellar
Ctrl-C stops an answer; at the prompt, Ctrl-C or Ctrl-D leaves."""


@dataclass(frozen=True, slots=True)
class Where:
    """What the person may need to know about their setup."""

    database: str
    model_url: str
    log_file: str | None = None  # None: logs go to the terminal (--verbose)
    stale_after: timedelta = timedelta(minutes=10)  # the longest a turn can take (app.py)


def person_for(name: str | None) -> Person:
    local = name or getpass.getuser() or "me"
    return Person(channel=CHANNEL, local_name=local, display_name=local)


def help_text(where: Where) -> str:
    logs = f"Logs: {where.log_file}" if where.log_file else "Logs: shown here (--verbose)"
    return f"{EXAMPLES}\n{COMMANDS}\nDatabase: {where.database}\n{logs}"


def unreachable_hint(reply: TurnReply, where: Where) -> str:
    if reply.status != "error":
        return ""
    return f"The model at {where.model_url} did not answer (set SOMMELIER_LLM_BASE_URL)."


class LineReader:
    """Reads lines in a daemon thread, one when asked: the prompt never shows while an answer
    streams, and a blocked read never keeps the process alive."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.loop = asyncio.get_running_loop()
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.wanted = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            self.wanted.wait()
            self.wanted.clear()
            try:
                line: str | None = self.console.input(PROMPT)
            except (EOFError, OSError, ValueError):
                line = None
            self.loop.call_soon_threadsafe(self.lines.put_nowait, line)
            if line is None:
                return

    async def next(self) -> str | None:
        """The next line; None for Ctrl-D, or Ctrl-C at the prompt."""
        self.wanted.set()
        return await self.lines.get()

    def interrupt(self) -> None:
        self.lines.put_nowait(None)


async def turn(
    service: ChatService,
    person: Person,
    text: str,
    console: Console,
    stream: bool,
    retry: bool = True,
) -> TurnReply:
    """One turn shown in the terminal; `retry`: a failure may point to /retry (the
    interactive chat has it, `--message` does not)."""
    if not (stream and console.is_terminal):
        waiting = console.status("[dim]thinking…[/dim]") if console.is_terminal else None
        with waiting or contextlib.nullcontext():
            reply = await service.turn(person, text)
        render(console, reply, retry=retry)
        return reply
    with LiveAnswer(console) as live:
        try:
            reply = await service.turn(person, text, sink=live)
        except asyncio.CancelledError:
            if live.shown.strip():
                console.print(Text(f"{live.shown.strip()} (stopped)"))
            raise
    render(console, reply, kept=live.shown, retry=retry)
    return reply


async def one_shot(
    service: ChatService,
    person: Person,
    message: str,
    as_json: bool,
    stream: bool = True,
    where: Where | None = None,
) -> int:
    """Exit codes: 0 an answer (or a polite refusal), 1 no answer could be produced, 3 the
    model is unreachable (2, bad configuration, is the command's own)."""
    if as_json:
        reply = await service.turn(person, message)
        sys.stdout.write(reply_json(reply) + "\n")
    else:
        reply = await turn(service, person, message, Console(), stream, retry=False)
    errors = Console(stderr=True)
    if reply.status == "error":
        url = where.model_url if where else "SOMMELIER_LLM_BASE_URL"
        errors.print(
            f"error: the model is unreachable at {url}; check SOMMELIER_LLM_BASE_URL and try again",
            highlight=False,
        )
        return 3
    if reply.status == "database":
        database = where.database if where else "the database"
        errors.print(
            f"error: {database} cannot be reached; check SOMMELIER_DATABASE_URL",
            highlight=False,
        )
    return 0 if reply.status in ("ok", "refused") else 1


class Session:
    def __init__(self, service: ChatService, person: Person, stream: bool, where: Where) -> None:
        self.service = service
        self.person = person
        self.stream = stream
        self.where = where
        self.console = Console()
        self.last_failed: str | None = None
        self.running: asyncio.Task[TurnReply] | None = None
        self.numbers: list[int] = []  # /sessions' list, for /load N
        self.proposal: int | None = None  # the stored reply that offered bottles to add (/add)
        self.language = "en"  # of the last reply

    async def run(self) -> int:
        self.console.print(Panel(help_text(self.where), title="Sommelier", border_style="red"))
        await self._cut_short()
        reader = LineReader(self.console)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, lambda: self._interrupt(reader))
        try:
            while (line := await reader.next()) is not None:
                if not await self.handle(line.strip()):
                    break
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        self.console.print()
        return 0

    async def _cut_short(self) -> None:
        """Messages a stopped program never answered (db/turns.py `sweep`): the latest one is
        offered to /retry."""
        try:
            stale = await self.service.turns.sweep(CHANNEL, self.where.stale_after)
        except DATABASE_ERRORS:
            return  # the first message will say the database is away
        if stale:
            self.last_failed = stale[-1].text
            self.console.print(
                Text(f"Your message “{stale[-1].text[:60]}” got no answer: the program stopped. ")
                .append("/retry", style="bold")
                .append(" sends it again."),
                style="dim",
            )

    def _interrupt(self, reader: LineReader) -> None:
        if self.running is not None and not self.running.done():
            self.running.cancel()  # Ctrl-C during an answer: stop it, stay in the chat
        else:
            reader.interrupt()  # at the prompt: leave

    async def handle(self, line: str) -> bool:
        """Handle one line; False to leave."""
        if not line:
            return True
        command, _, argument = line.partition(" ")
        command = command.lower()
        if command in ("/exit", "/quit"):
            return False
        if not command.startswith("/") or command == "/retry":
            await self.ask(line if command != "/retry" else None)
            return True
        handler = self.commands().get(command)
        if handler is None:
            self.console.print(f"[dim]Unknown command {command}; see /help.[/dim]")
            return True
        try:
            await handler(argument.strip())
        except DATABASE_ERRORS:
            # The same line a message gets: the session goes on, the command can be repeated.
            self.console.print(f"[yellow]{friendly('database', None)}[/yellow]", highlight=False)
        return True

    def commands(self) -> dict[str, Callable[[str], Awaitable[None]]]:
        return {
            "/help": self.show_help,
            "/new": self.new,
            "/history": self.history,
            "/sessions": self.sessions,
            "/load": self.load,
            "/good": self.good,
            "/bad": self.bad,
            "/profile": self.profile,
            "/forget": self.forget,
            "/cellar": self.cellar,
            "/add": self.add,
        }

    async def ask(self, text: str | None) -> None:
        if text is None:
            if self.last_failed is None:
                self.console.print("[dim]Nothing to retry.[/dim]")
                return
            text = self.last_failed
        self.running = asyncio.create_task(
            turn(self.service, self.person, text, self.console, self.stream)
        )
        try:
            reply = await self.running
        except asyncio.CancelledError:
            self.console.print("[yellow]Stopped. (/retry to ask again)[/yellow]")
            self.last_failed = text
            return
        finally:
            self.running = None
        self.proposal = reply.message_id if reply.adding is not None else None
        self.language = reply.language
        if self.proposal is not None:
            sure = reply.adding is not None and reply.adding.get("sure")
            choices = "/add 1" if sure else "/add N (the wine's number; /add 0: as you named it)"
            self.console.print(f"[dim]{choices} adds them to your cellar.[/dim]", highlight=False)
        hint = unreachable_hint(reply, self.where)
        if hint:
            self.console.print(f"[dim]{hint}[/dim]", highlight=False)
        self.last_failed = text if reply.status in RETRYABLE else None

    async def good(self, reason: str) -> None:
        await self._rate(1, reason)

    async def bad(self, reason: str) -> None:
        await self._rate(-1, reason)

    async def _rate(self, value: int, reason: str) -> None:
        rated = await self.service.preferences.rate(self.person, value, reason=reason or None)
        self.console.print(f"[dim]{rated.text}[/dim]", highlight=False)

    async def profile(self, _: str) -> None:
        lines = await self.service.preferences.profile(self.person)
        if not lines:
            self.console.print("[dim]I don't remember anything about your taste yet.[/dim]")
        for line in lines:
            self.console.print(line, highlight=False, markup=False)

    async def forget(self, argument: str) -> None:
        """/forget: the taste profile; /forget cellar: the cellar too, asked for by name."""
        async with self.service.sessions() as session:
            owner = await owner_of(session, self.person)
            if argument.lower() == "cellar":
                bottles = await forget(session, owner)
                await session.commit()
                self.console.print(f"[dim]Your cellar is deleted ({bottles} bottles).[/dim]")
                return
            bottles = await bottles_held(session, owner)
            await session.commit()
        await self.service.preferences.forget(self.person)
        self.console.print("[dim]Forgotten: your taste profile is deleted.[/dim]")
        if bottles:
            self.console.print(
                f"[dim]Your cellar still holds {bottles} bottles; /forget cellar deletes it.[/dim]"
            )

    async def cellar(self, _: str) -> None:
        """/cellar: the person's bottles by readiness (`sommelier cellar import` adds them)."""
        async with self.service.sessions() as session:
            cellar = await cellar_of(session, await owner_of(session, self.person))
            found = await held(session, cellar)
            await session.commit()
        if not found:
            self.console.print("[dim]Your cellar is empty: add bottles with `sommelier cellar "
                               "import FILE --user NAME`.[/dim]")  # fmt: skip
            return
        self.console.print(cellar_text(found, None), highlight=False, markup=False)

    async def add(self, argument: str) -> None:
        """/add N: the bottles the last reply offered to add, as its N-th wine (0: as named)."""
        if self.proposal is None or not argument.isdigit():
            self.console.print("[dim]Tell me first which bottles you have.[/dim]")
            return
        async with self.service.sessions() as session, session.begin():
            owner = await owner_of(session, self.person)
            added = await confirm_reply(session, owner, self.proposal, int(argument), owner.user_id)
        if added is None:
            self.console.print(f"[dim]No wine {argument} was offered.[/dim]", highlight=False)
            return
        self.console.print(added.said(self.language), highlight=False, markup=False)

    async def show_help(self, _: str) -> None:
        self.console.print(help_text(self.where), highlight=False)

    async def new(self, _: str) -> None:
        await self.service.new_conversation(self.person)
        self.console.print("[dim]Started a fresh conversation.[/dim]")

    async def history(self, _: str) -> None:
        entries = await self.service.history(self.person)
        if not entries:
            self.console.print("[dim]Nothing yet in this conversation.[/dim]")
        for entry in entries:
            if entry.role == "user":
                self.console.print(f"[bold]you>[/bold] {entry.text}", highlight=False)
            elif entry.wines:
                self.console.print(
                    f"[bold]sommelier>[/bold] {', '.join(entry.wines)}", highlight=False
                )
            else:
                self.console.print(f"[bold]sommelier>[/bold] {entry.text}", highlight=False)

    async def sessions(self, _: str) -> None:
        found = await self.service.conversations(self.person)
        self.numbers = [c.id for c in found]
        if not found:
            self.console.print("[dim]No conversations yet.[/dim]")
        for number, c in enumerate(found, 1):
            when = c.last_activity_at.astimezone().strftime("%Y-%m-%d %H:%M")
            mark = " (open)" if c.open else ""
            first = (c.first_request or "—")[:60]
            self.console.print(
                f"{number}. {when}  {c.messages} messages  {first}{mark}", highlight=False
            )

    async def load(self, argument: str) -> None:
        if not self.numbers:
            self.numbers = [c.id for c in await self.service.conversations(self.person)]
        if not argument.isdigit() or not 1 <= int(argument) <= len(self.numbers):
            self.console.print("[dim]Use /sessions, then /load N with a number from it.[/dim]")
            return
        await self.service.resume(self.person, self.numbers[int(argument) - 1])
        self.console.print(f"[dim]Back in conversation {argument}; /history shows it.[/dim]")


async def interactive(
    service: ChatService, person: Person, stream: bool = True, where: Where | None = None
) -> int:
    where = where or Where(database="?", model_url="SOMMELIER_LLM_BASE_URL")
    return await Session(service, person, stream, where).run()
