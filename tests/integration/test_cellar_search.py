"""The agent's search of a person's own cellar (issue 48, item 4), through the real openai SDK
over HTTP against a scripted server: the plan is offered the cellar only when the person has
one, a cellar search shows only their bottles, and a card says how many they hold and where."""

from __future__ import annotations

from typing import Any

from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from tests.support.chat import ANA
from tests.support.fake_openai import completion
from tests.support.scripted import plan_text, reply

BOB = ANA.__class__(channel="cli", local_name="bob", display_name="Bob")
LAMB = "What should I open for the lamb tonight?"


def chat(app, fake):  # type: ignore[no-untyped-def]
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "llm_base_url": fake.base_url,
            "llm_model": "fake-model",
            "agent_strategy": "planner",
        }
    )
    return app.chat_service()


async def _ana_owns(app) -> None:  # type: ignore[no-untyped-def]
    rows = [
        CellarRow(1, "La Rioja Alta Gran Reserva 904", 2, "La Rioja Alta", "2015", "rack B"),
        CellarRow(2, "Graham's 10 Year Old Tawny Port", 1, "Graham's", "NV", "kitchen"),
        CellarRow(3, "Grandpa's own red", 6),  # not in the catalog: no card to show
    ]
    async with app.sessions() as session:
        cellar = await cellar_of(session, await owner_of(session, ANA))
        await add_rows(session, cellar, rows, None, "csv")
        await session.commit()


def _plan_schema(request: dict[str, Any]) -> dict[str, Any]:
    schema = request["response_format"]["json_schema"]["schema"]
    arguments = schema["properties"]["arguments"]
    return next(a for a in arguments["anyOf"] if "food" in a["properties"])


async def test_a_cellar_search_shows_only_the_persons_bottles_with_how_many(
    app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    await _ana_owns(app)
    fake_openai.add(
        completion(plan_text(arguments={"source": "open_own_bottle", "query": "", "food": "lamb"})),
        completion(reply(["sm-033"])),
    )
    result = await chat(app, fake_openai).turn(ANA, LAMB)
    assert result.ok, result.text
    assert [c.wine_id for c in result.cards] == ["sm-033"]
    assert result.cards[0].cellar.startswith("In your cellar: 2 · rack B · ")
    planning, answering = fake_openai.requests
    # Ana has a cellar: the plan may say where to look, and the words did not settle it.
    assert _plan_schema(planning)["properties"]["source"] == {
        "enum": ["buy_from_shop", "open_own_bottle"]
    }
    # The answer could choose only among her bottles: the shop's lamb reds were not offered.
    shapes = answering["response_format"]["json_schema"]["schema"]["properties"]["wines"]
    items = shapes["items"]
    offered = {s["properties"]["wine_id"]["enum"][0] for s in items.get("anyOf", [items])}
    assert offered <= {"sm-033", "sm-040"}


async def test_a_shop_search_still_marks_a_wine_the_person_owns(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    await _ana_owns(app)
    fake_openai.add(
        completion(
            plan_text(arguments={"source": "buy_from_shop", "query": "rioja", "type": "red"})
        ),
        completion(reply(["sm-033"])),
    )
    result = await chat(app, fake_openai).turn(ANA, "A Rioja to buy for Sunday?")
    assert result.ok and result.cards[0].wine_id == "sm-033"
    assert "In your cellar: 2" in result.cards[0].cellar


async def test_nobody_else_is_offered_a_cellar_or_sees_anothers(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    await _ana_owns(app)
    fake_openai.add(
        completion(plan_text(arguments={"query": "rioja"})),
        completion(reply(["sm-033"])),
    )
    # Vague words: a plan is made (the words settle nothing), and it is offered no cellar.
    result = await chat(app, fake_openai).turn(BOB, "What should I open tonight?")
    assert result.ok and all(c.cellar == "" for c in result.cards)
    planning = fake_openai.requests[0]
    assert "source" not in _plan_schema(planning)["properties"]
    assert not any("own cellar" in str(m.get("content")) for m in planning["messages"])


async def test_a_wish_no_bottle_meets_is_said_of_the_cellar(app, fake_openai) -> None:  # type: ignore[no-untyped-def]
    await _ana_owns(app)
    plan = {"source": "open_own_bottle", "query": "", "type": "sparkling"}
    fake_openai.add(completion(plan_text(arguments=plan)), completion(reply(["sm-033"])))
    result = await chat(app, fake_openai).turn(ANA, "Any bubbles in my cellar?")
    assert result.ok
    assert result.notice.startswith("None of your bottles is sparkling.")
    assert {c.wine_id for c in result.cards} <= {"sm-033", "sm-040"}


async def test_their_bottles_the_catalog_lacks_are_said_under_a_cellar_search(
    app, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    """No card can show a wine the catalog lacks: a line each, from their rows, when it meets
    what the search asked for (a row that does not say its colour meets no colour)."""
    await _ana_owns(app)
    own = [
        CellarRow(4, "Domaine Imaginaire Rouge", 3, "Domaine Imaginaire", "2019", "rack C",
                  type="red", country="France"),
        CellarRow(5, "Domaine Imaginaire Blanc", 2, "Domaine Imaginaire", "2021", type="white"),
    ]  # fmt: skip
    async with app.sessions() as session:
        await add_rows(
            session, await cellar_of(session, await owner_of(session, ANA)), own, None, "csv"
        )
        await session.commit()
    asked = {"source": "open_own_bottle", "query": "", "type": "red", "food": "lamb"}
    fake_openai.add(completion(plan_text(arguments=asked)), completion(reply(["sm-033"])))
    result = await chat(app, fake_openai).turn(ANA, LAMB)
    assert result.ok and [c.wine_id for c in result.cards] == ["sm-033"]
    said, *rest = result.closing.split("\n\n")
    lines = said.splitlines()
    assert lines[0] == "Also in your cellar, not in the catalog:"
    assert len(lines) == 2 and lines[1].startswith(
        "• 3 × Domaine Imaginaire Rouge 2019 · rack C · "
    )
    assert rest  # the usual closing follows
