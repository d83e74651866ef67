"""`sommelier bot` and `sommelier worker` as separate processes, a scripted model server's
answers ("re: msg-…"), and what tests of them read from the database."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import select, text

from sommelier.app import App
from sommelier.db.models import InboundMessage
from tests.support.fake_openai import Reply, streamed
from tests.support.scripted import reply
from tests.support.waiting import until

MARK = re.compile(r"msg-\w+")


def slow_answers(seconds: float) -> Any:
    """The model of every worker process: "re: msg-…" after `seconds`."""

    def step(body: dict[str, Any]) -> Reply:
        said = [str(m.get("content")) for m in body["messages"] if m.get("role") == "user"]
        mark = next((m.group() for s in reversed(said) if (m := MARK.search(s))), "?")
        content = reply([], "informational", intro=f"re: {mark}", closing="")
        answer = streamed(content)
        answer.delay = seconds
        return answer

    return step


class Processes:
    """`sommelier bot` and `sommelier worker` processes this test starts, and stops."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.running: list[asyncio.subprocess.Process] = []

    async def start(self, command: str) -> asyncio.subprocess.Process:
        log = (self.logs / f"{command}-{len(self.running)}.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sommelier.cli", command,
            env=self.env, stdout=log, stderr=log,
        )  # fmt: skip
        self.running.append(process)
        return process

    async def stop_all(self) -> None:
        for process in self.running:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
        for process in self.running:
            try:
                await asyncio.wait_for(process.wait(), 60)
            except TimeoutError:
                process.kill()
                await process.wait()

    def logged(self, line: str) -> bool:
        """Whether any process has logged `line`, however long ago (output() keeps the tails)."""
        return any(line in p.read_text(errors="replace") for p in self.logs.glob("*.log"))

    def output(self) -> str:
        """Each process's errors (the last 1,500 characters of each: a traceback ends with its
        exception), then its log's tail: what a failed assertion shows."""
        return "\n".join(
            _errors_then_tail(p.read_text(errors="replace")) for p in self.logs.glob("*.log")
        )


def _errors_then_tail(log: str) -> str:
    errors = [line[-1500:] for line in log.splitlines() if '"level": "error"' in line]
    return "\n".join([*errors, "…", log[-3000:]])


async def workers_ready(app: App, count: int) -> None:
    async def registered() -> bool:
        async with app.sessions() as session:
            found = await session.scalar(text("SELECT count(*) FROM procrastinate_workers"))
        return found == count

    await until(registered, timeout=90)


async def unanswered(app: App) -> int:
    async with app.sessions() as session:
        statuses = (await session.scalars(select(InboundMessage.status))).all()
    return sum(status != "ok" for status in statuses)
