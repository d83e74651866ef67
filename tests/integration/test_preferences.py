"""Feedback and the taste profile on a real database (SQLite and PostgreSQL): what a person says
about their taste is kept across conversations, respected by the search, shown by /profile and
deleted by /forget; a 👍/👎 is one row per reply or card whatever the presses."""

from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy import func, select, text

from sommelier.chat.service import Origin
from sommelier.db.models import Feedback, TasteProfile, Wine
from tests.support.chat import ANA, native
from tests.support.scripted import ScriptedModel, from_results, result_ids, tools

SEARCH_DINNER = ("search_wines", {"query": "dinner"})


def shown_in(request: dict) -> list[str]:  # type: ignore[type-arg]
    """The wine ids the tools returned in a recorded request."""
    return result_ids(SimpleNamespace(messages=request["messages"]))  # type: ignore[arg-type]


async def _types_of(app, ids: list[str]) -> set[str]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return set(
            (await session.scalars(select(Wine.type).where(Wine.external_id.in_(ids)))).all()
        )


async def test_a_stated_dislike_is_kept_across_conversations_until_forgotten(app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(("search_wines", {"query": "roast chicken"})),
            from_results(2),
            tools(SEARCH_DINNER),
            from_results(2),
            tools(SEARCH_DINNER),
            from_results(2),
        ]
    )
    service = native(app, model)
    await service.turn(ANA, "I don't drink red wine. What goes with roast chicken?")
    assert await service.preferences.profile(ANA) == ["Styles you'd rather avoid: red"]

    await service.new_conversation(ANA)
    await service.turn(ANA, "Recommend a bottle for dinner on Saturday")
    second = model.requests[3]
    assert "They do not want: red" in second["messages"][1]["content"]  # the profile note
    shown = shown_in(second)
    assert shown and "red" not in await _types_of(app, shown)

    assert await service.preferences.forget(ANA) is True
    async with app.sessions() as session:
        assert await session.scalar(select(func.count()).select_from(TasteProfile)) == 0
    await service.new_conversation(ANA)
    await service.turn(ANA, "Recommend a bottle for dinner on Saturday")
    assert all(
        m["role"] != "system" or "They do not want" not in m["content"]
        for m in model.requests[5]["messages"]
    )
    assert await service.preferences.profile(ANA) == []


async def test_asking_for_a_disliked_style_still_gets_it(app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(SEARCH_DINNER),
            from_results(1),
            tools(("search_wines", {"type": "red"})),
            from_results(2),
        ]
    )
    service = native(app, model)
    await service.turn(ANA, "I never drink red. Something for dinner?")
    await service.turn(ANA, "Actually, my father is coming: a red for steak, please")
    assert await _types_of(app, shown_in(model.requests[3])) == {"red"}


async def test_a_second_press_changes_the_row_and_a_card_thumbs_down_hides_the_wine(app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [tools(SEARCH_DINNER), from_results(2), tools(SEARCH_DINNER), from_results(2)]
    )
    service = native(app, model)
    first = await service.turn(ANA, "Two wines for dinner")
    disliked = first.cards[0].wine_id

    assert (await service.preferences.rate(ANA, 1)).ok  # the reply as a whole
    assert (await service.preferences.rate(ANA, -1, reason="too pricey")).ok  # changed mind
    await service.preferences.rate(ANA, -1, message_id=first.message_id, card=1)
    async with app.sessions() as session:
        rows = (await session.scalars(select(Feedback).order_by(Feedback.card))).all()
    assert [(r.card, r.wine_id, r.value, r.reason) for r in rows] == [
        (0, None, -1, "too pricey"),
        (1, disliked, -1, None),
    ]
    assert f"Wines you gave a 👎: {disliked}" in await service.preferences.profile(ANA)

    await service.new_conversation(ANA)
    await service.turn(ANA, "Two wines for dinner")
    assert disliked not in shown_in(model.requests[3])

    daily = await _rows(
        app, "SELECT replies, thumbs_up, thumbs_down, most_disliked FROM admin_feedback_daily"
    )
    assert daily == [{"replies": 2, "thumbs_up": 0, "thumbs_down": 2, "most_disliked": disliked}]


async def test_rating_with_nothing_to_rate_says_so(app) -> None:  # type: ignore[no-untyped-def]
    rated = await native(app, ScriptedModel([])).preferences.rate(ANA, 1)
    assert not rated.ok and "no reply" in rated.text


async def _rows(app, sql: str) -> list[dict]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return [dict(r._mapping) for r in (await session.execute(text(sql))).all()]


async def test_in_a_group_a_request_ignores_one_member_s_profile_but_learns_for_them(app) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedModel(
        [
            tools(("search_wines", {"query": "roast chicken"})),
            from_results(2),
            tools(SEARCH_DINNER),
            from_results(2),
        ]
    )
    service = native(app, model)
    await service.turn(ANA, "I don't drink red wine. What goes with roast chicken?")
    group = Origin(key=1, thread=-100700, shared=True)
    await service.turn(ANA, "I love Riesling. What should we open for dinner?", origin=group)
    in_group = model.requests[2]
    # "we" is the group: Ana's dislike of red neither goes to the model nor filters the search.
    assert all("They do not want" not in m["content"] for m in in_group["messages"])
    # What Ana said in the group is still hers, added to what she had said before.
    profile = await service.preferences.profile(ANA)
    assert "Styles you'd rather avoid: red" in profile
    assert any("riesling" in line.casefold() for line in profile)
