"""Many people, one model: through the real openai SDK against a server that cuts a running
answer when another request arrives (as llama-cpp-python's server does by default), turns of
different chats queue instead of breaking each other, and each waiting person hears their
place. Stopping a waiting turn stores it as cancelled and the person's next message runs."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from sommelier.agent.parsers import Phase, Waiting
from sommelier.db.repositories import Person
from tests.support.chat import inbound
from tests.support.fake_openai import Reply, completion, streamed
from tests.support.waiting import until

STEAK = "a red under 20 euros for steak"


def answer_from_results(body: dict[str, Any]) -> Reply:
    """A slow, well-behaved model: recommends the first wine of the turn's search."""
    tools = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    wine = next(line[2:8] for line in "\n".join(tools).splitlines() if line.startswith("- "))
    reply = {
        "response_type": "recommendation",
        "intro": "A good red for your steak.",
        "wines": [{"wine_id": wine, "why": "Ripe and supple."}],
        "closing": "Anything else?",
        "guard": None,
    }
    if not body.get("stream"):
        time.sleep(0.3)  # slow enough for the other chat's request to arrive meanwhile
        return completion(reply)
    return streamed(json.dumps(reply), chunk=6, chunk_delay=0.02)


class Events:
    def __init__(self) -> None:
        self.seen: list[object] = []

    def emit(self, event: object) -> None:
        self.seen.append(event)


def service(app, fake, capacity: int | None = 1):  # type: ignore[no-untyped-def]
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "llm_base_url": fake.base_url,
            "agent_strategy": "planner",
            "llm_concurrency": capacity,
            "stream_retry_delay": 0.05,
        }
    )
    return app.chat_service()


def person(name: str) -> Person:
    return Person(channel="cli", local_name=name, display_name=name)


async def test_two_chats_at_once_never_cut_each_others_answer(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.interrupting = True
    fake_openai.default = answer_from_results
    chat = service(sqlite_app, fake_openai)
    first, second = await asyncio.gather(
        chat.turn(person("ana"), STEAK, sink=Events()),
        chat.turn(person("ben"), STEAK, sink=Events()),
    )
    assert (first.status, second.status) == ("ok", "ok")
    assert fake_openai.cut == 0 and len(fake_openai.requests) == 2


async def test_without_the_queue_the_second_chat_cuts_the_first(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    # The control: the endpoint taken as serving two at once, the second chat asking while the
    # first's answer streams.
    fake_openai.interrupting = True
    fake_openai.default = answer_from_results
    chat = service(sqlite_app, fake_openai, capacity=2)
    first = asyncio.create_task(chat.turn(person("ana"), STEAK, sink=Events()))
    await until(lambda: bool(fake_openai._streaming))
    await chat.turn(person("ben"), STEAK, sink=Events())
    await first
    assert fake_openai.cut >= 1


async def test_a_waiting_turn_hears_its_place_then_runs(sqlite_app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = answer_from_results
    chat = service(sqlite_app, fake_openai)
    events = Events()
    first = asyncio.create_task(chat.turn(person("ana"), STEAK))
    await until(lambda: chat.admission.running > 0)
    second = await chat.turn(person("ben"), STEAK, sink=events)
    await first
    waits = [e for e in events.seen if isinstance(e, Waiting)]
    assert second.ok and waits and waits[0].ahead == 1 and waits[0].seconds > 0
    phases = [e.name for e in events.seen if isinstance(e, Phase)]
    assert phases[:2] == ["admitted", "searching"] and "writing" in phases


async def test_a_turn_stopped_while_it_waits_is_stored_cancelled_and_the_next_runs(
    sqlite_app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    fake_openai.default = answer_from_results
    chat = service(sqlite_app, fake_openai)
    first = asyncio.create_task(chat.turn(person("ana"), STEAK))
    await until(lambda: chat.admission.running > 0)
    waiting = asyncio.create_task(chat.turn(person("ben"), "a white for fish"))
    await until(lambda: chat.admission.waiting > 0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert (await first).ok
    rows = {row.text: row.status for row in await inbound(sqlite_app)}
    assert rows == {STEAK: "ok", "a white for fish": "cancelled"}
    assert (await chat.turn(person("ben"), "a white for fish, please")).ok
