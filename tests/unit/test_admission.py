"""The model endpoint's queue: turns take turns fairly across chats, each waiting turn hears
its place, a wait has its own limit, and a turn that leaves the queue leaves no hole."""

from __future__ import annotations

import asyncio

import pytest

from sommelier.agent.admission import Admission, Place, QueueTimeout


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_turns_from_different_chats_take_turns_round_robin() -> None:
    admission = Admission(capacity=1)
    order: list[str] = []
    gate = asyncio.Event()

    async def turn(party: str, name: str) -> None:
        async with admission.turn(party):
            order.append(name)
            await gate.wait()

    first = asyncio.create_task(turn("a", "a1"))
    await settle()
    tasks = [asyncio.create_task(turn(p, n)) for p, n in [("a", "a2"), ("a", "a3"), ("b", "b1")]]
    tasks.append(asyncio.create_task(turn("c", "c1")))
    await settle()
    gate.set()
    await asyncio.gather(first, *tasks)
    # Chat a's three turns do not hold b and c back: one turn per chat per round.
    assert order == ["a1", "b1", "c1", "a2", "a3"]


async def test_a_waiting_turn_hears_its_place_and_an_estimate_as_the_queue_moves() -> None:
    admission = Admission(capacity=1)
    heard: list[Place] = []
    gates = [asyncio.Event() for _ in range(3)]

    async def turn(party: str, gate: asyncio.Event, listen: bool = False) -> None:
        async with admission.turn(party, heard.append if listen else None):
            await gate.wait()

    tasks = [asyncio.create_task(turn("a", gates[0]))]
    await settle()
    tasks.append(asyncio.create_task(turn("b", gates[1])))
    await settle()
    tasks.append(asyncio.create_task(turn("c", gates[2], listen=True)))
    await settle()
    assert heard == [Place(ahead=2, seconds=30)]  # one running, one waiting before it
    gates[0].set()
    await settle()
    assert heard[-1].ahead == 1  # the estimate is now the median of the turns measured
    for gate in gates[1:]:
        gate.set()
    await asyncio.gather(*tasks)


async def test_several_slots_admit_several_turns_at_once() -> None:
    admission = Admission(capacity=2)
    running = 0
    most = 0
    two_in = asyncio.Event()

    async def turn(party: str) -> None:
        nonlocal running, most
        async with admission.turn(party):
            running += 1
            most = max(most, running)
            if running == 2:
                two_in.set()
            # Held until two are in at once: one slot only would end this with a timeout.
            await asyncio.wait_for(two_in.wait(), timeout=10)
            running -= 1

    await asyncio.gather(*(turn(p) for p in "abcdef"))
    assert most == 2


async def test_a_wait_past_the_limit_ends_and_leaves_no_hole_in_the_queue() -> None:
    admission = Admission(capacity=1, wait_limit=0.05)
    gate = asyncio.Event()

    async def hold() -> None:
        async with admission.turn("a"):
            await gate.wait()

    holder = asyncio.create_task(hold())
    await settle()
    with pytest.raises(QueueTimeout):
        async with admission.turn("b"):
            pass
    assert admission.waiting == 0
    gate.set()
    await holder
    async with admission.turn("c"):  # the endpoint is free again at once
        assert admission.running == 1


async def test_a_turn_stopped_while_it_waits_gives_its_place_up() -> None:
    admission = Admission(capacity=1)
    gate = asyncio.Event()

    async def hold() -> None:
        async with admission.turn("a"):
            await gate.wait()

    holder = asyncio.create_task(hold())
    await settle()
    waiter = asyncio.create_task(hold())
    await settle()
    waiter.cancel()
    await settle()
    assert waiter.cancelled() and admission.waiting == 0
    gate.set()
    await holder
    assert admission.running == 0


async def test_a_cut_stream_queues_again_behind_the_other_chats() -> None:
    admission = Admission(capacity=1)
    order: list[str] = []

    async def retrying() -> None:
        async with admission.turn("a") as ticket:
            order.append("a: first try")
            await settle()
            await admission.rejoin(ticket)
            order.append("a: retry")

    async def other() -> None:
        async with admission.turn("b"):
            order.append("b")

    first = asyncio.create_task(retrying())
    await asyncio.sleep(0)
    second = asyncio.create_task(other())
    await asyncio.gather(first, second)
    assert order == ["a: first try", "b", "a: retry"]
    assert admission.running == 0
