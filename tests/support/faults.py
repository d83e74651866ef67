"""The fault matrix: a model server misbehaving in the ways real ones do, one turn each.

Shared by tests/integration/test_fault_matrix.py (which asserts) and bench/fault_matrix.py
(which prints what the person saw and what the tables hold).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from sommelier.app import App
from sommelier.chat.service import TurnReply
from sommelier.db.models import InboundMessage, ModelCall
from sommelier.db.repositories import Person
from tests.support.fake_openai import FakeOpenAI, Reply, completion, error, streamed
from tests.support.scripted import reply

PERSON = Person(channel="cli", local_name="fault", display_name="Fault")
# Words that settle the search: the first call is the answer, no planning call.
REQUEST = "a red under 20 euros for steak"
GOOD = reply(["sm-059"], intro="Catena Malbec, plush and ready for steak.")


def answer_with(text: str) -> dict[str, Any]:
    return {**GOOD, "intro": text}


@dataclass(frozen=True)
class Fault:
    name: str
    steps: list[Any]
    expect: str  # the turn's status as the person meets it
    settings: dict[str, Any] = field(default_factory=dict)
    stream: bool = False


def _nul() -> Reply:
    # json.dumps writes the NUL as the escape \u0000, as a model would.
    return completion(json.dumps(answer_with("Catena\u0000 Malbec, plush.")))


FAULTS = [
    Fault("429 with Retry-After", [error(429, "slow", {"retry-after": "1"}), completion(GOOD)], "ok"),
    Fault("500 once", [error(500), completion(GOOD)], "ok"),
    Fault("503 that persists", [error(503, "down")] * 4, "error"),
    Fault("a hang past the read timeout", [Reply(delay=1.5, body={})] * 3, "error",
          {"llm_read_timeout": 0.4}),
    Fault("connection reset, every time", [Reply(drop=True)] * 4, "error"),
    Fault("a 200 that is not a completion", [Reply(body={"hello": "world"})] * 2, "error"),
    Fault("a stream cut twice", [streamed(json.dumps(GOOD), chunk=8, drop_after=2),
          streamed(json.dumps(GOOD)[16:], chunk=8, drop_after=1)], "interrupted", stream=True),
    Fault("invalid escapes", [completion('{"intro": "Here\\\'s a red"'), completion(GOOD)],
          "ok"),
    Fault("nesting 100,000 deep", [completion("[" * 100_000), completion(GOOD)], "ok"),
    Fault("a NUL in the answer", [_nul()], "ok"),
    Fault("a 10 MB stream", [streamed("x" * 10_000_000, chunk=65_536),
          streamed(json.dumps(GOOD))], "ok", stream=True),
    Fault("a 200 whose body is broken JSON", [Reply(raw='{"choices": [{"mess'),
          completion(GOOD)], "ok"),
    Fault("a completion with no choices", [Reply(body={"id": "x", "object": "chat.completion",
          "created": 0, "model": "m", "choices": []}), completion(GOOD)], "ok"),
    Fault("a fence and 40,000 spaces", [completion("```json" + " " * 40_000),
          completion(GOOD)], "ok"),
    Fault("a 1 MB answer", [completion("Lovely wine. " * 80_000), completion(GOOD)], "ok"),
    Fault("escape sequences in the stream", [streamed(json.dumps(answer_with(
          "Catena \x1b]52;c;cHduZWQ=\x07Malbec\x1b[31m, plush.")), chunk=5)], "ok",
          stream=True),
]  # fmt: skip


class Shown:
    """A sink: what the person saw while the answer streamed."""

    def __init__(self) -> None:
        self.text = ""

    def emit(self, event: object) -> None:
        self.text += getattr(event, "text", "")


@dataclass
class Outcome:
    reply: TurnReply
    inbound: list[str]
    calls: list[tuple[str, str, str | None]]
    requests: int
    shown: str = ""  # what streamed to the person


async def run_fault(app: App, fault: Fault, new_server: Callable[[], FakeOpenAI]) -> Outcome:
    server = new_server()
    try:
        server.add(*fault.steps)
        app.settings = app.settings.model_validate(
            {
                **app.settings.model_dump(),
                "llm_base_url": server.base_url,
                "agent_strategy": "planner",
                "stream_retry_delay": 0.05,
                "llm_network_retries": 1,
                **fault.settings,
            }
        )
        sink = Shown() if fault.stream else None
        turn = await app.chat_service().turn(PERSON, REQUEST, sink=sink)
        async with app.sessions() as session:
            inbound = list((await session.scalars(select(InboundMessage.status))).all())
            rows = (await session.execute(
                select(ModelCall.purpose, ModelCall.outcome, ModelCall.error_kind)
                .order_by(ModelCall.id)
            )).all()  # fmt: skip
        shown = sink.text if sink is not None else ""
        return Outcome(turn, inbound, [tuple(r) for r in rows], len(server.requests), shown)
    finally:
        server.stop()
