"""Guest mode (Bot API 10.0) against the Bot API emulator: an @mention of the bot in a chat it
is not in gets the catalog's wines there at once through answerGuestQuery, then the model's
answer in their place (editMessageText by the guest message's inline_message_id), with nothing
stored; a model that cannot answer, or a person over the rate limit, leaves the catalog's
answer; an answer after Telegram's window is logged, not a failure."""

from __future__ import annotations

import json
import logging

from sqlalchemy import func, select

from sommelier.agent.model import ModelUnavailable
from sommelier.db.models import Conversation, InboundMessage, ModelCall
from tests.support.scripted import ScriptedModel, from_results, tools
from tests.support.telegram import TelegramUser, calls, new_token, running_bot
from tests.support.waiting import until

FRIENDS = -100900  # a group the bot is not a member of


async def _guest_answers(emulator, token: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [c["body"] for c in await calls(emulator, token) if c["method"] == "answerGuestQuery"]


RED = ("search_wines", {"type": "red", "max_price": 20})


async def test_a_mention_gets_catalog_wines_at_once_then_the_models_answer_in_their_place(
    sqlite_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1201)
    model = ScriptedModel([tools(RED), from_results(2)])
    caplog.set_level(logging.INFO)
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        asked = await ana.guest("@SommelierTestBot a red wine under 20 euros", FRIENDS)
        await until(lambda: _has_edits(telegram_emulator, token, 1))
    methods = [c["method"] for c in await calls(telegram_emulator, token)]
    # The catalog's answer first, inside Telegram's window; the model's after it.
    assert methods.index("answerGuestQuery") < methods.index("editMessageText")
    (sent,) = await _guest_answers(telegram_emulator, token)
    assert sent["guest_query_id"] == asked
    first = _result(sent)["input_message_content"]["message_text"]
    assert first.count("🍷 <b>") == 3 and "€" in first  # three wines, their prices
    (edit,) = await _edits(telegram_emulator, token)
    assert edit["inline_message_id"] == f"guest-{asked}"
    assert edit["text"].count("🍷 <b>") == 2 and "<i>" in edit["text"]  # two wines, each a why
    link = _markup(edit)["inline_keyboard"][0][0]["url"]
    assert link.startswith("https://t.me/SommelierTestBot?start=why_")
    # The model saw the message alone: the system prompt, the reply's language, the words;
    # no history, no profile of anyone.
    (first_call, _) = model.requests
    _system, language, said = first_call["messages"]
    assert language["content"].startswith("Write the intro") and said["role"] == "user"
    assert said["content"] == "a red wine under 20 euros"
    assert "sendMessage" not in methods  # nothing went to the chat the bot is not in
    async with sqlite_app.sessions() as session:  # nothing of that chat was stored
        for table in (InboundMessage, Conversation, ModelCall):
            assert await session.scalar(select(func.count()).select_from(table)) == 0


async def test_a_model_that_cannot_answer_leaves_the_catalogs_answer(
    sqlite_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1203)
    down = [ModelUnavailable("connection", "connection refused") for _ in range(6)]
    caplog.set_level(logging.INFO)
    async with running_bot(sqlite_app, ScriptedModel(down), telegram_emulator, token):
        await ana.guest("@SommelierTestBot a white for fish", FRIENDS)
        await until(lambda: _has_answers(telegram_emulator, token, 1))
        await until(
            lambda: any(r.getMessage().startswith("guest answer kept") for r in caplog.records)
        )
    assert await _edits(telegram_emulator, token) == []
    (sent,) = await _guest_answers(telegram_emulator, token)
    assert _result(sent)["input_message_content"]["message_text"].count("🍷 <b>") == 3
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_person_over_the_rate_limit_gets_the_catalogs_answer_and_no_model_turn(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1204)
    model = ScriptedModel([tools(RED), from_results(1)])
    async with running_bot(sqlite_app, model, telegram_emulator, token, rate_limit_per_minute=1):
        await ana.guest("@SommelierTestBot a red wine under 20 euros", FRIENDS)
        await until(lambda: _has_edits(telegram_emulator, token, 1))
        await ana.guest("@SommelierTestBot and a white one?", FRIENDS)
        await until(lambda: _has_answers(telegram_emulator, token, 2))
    assert len(model.requests) == 2  # the first message's two calls, none for the second
    assert len(await _edits(telegram_emulator, token)) == 1


async def test_a_guest_answer_after_its_window_is_logged_not_failed(
    sqlite_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1202)
    caplog.set_level(logging.INFO)
    await telegram_emulator.post("/control/guest_late", {"token": token, "count": 1})
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.guest("@SommelierTestBot a white for fish", FRIENDS)
        await until(lambda: _has_answers(telegram_emulator, token, 1))
        await until(
            lambda: any(r.getMessage().startswith("guest query not") for r in caplog.records)
        )
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures == [], [r.getMessage() for r in failures]
    assert "sendMessage" not in {c["method"] for c in await calls(telegram_emulator, token)}


async def _has_answers(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    return len(await _guest_answers(emulator, token)) >= count


async def _edits(emulator, token: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [c["body"] for c in await calls(emulator, token) if c["method"] == "editMessageText"]


async def _has_edits(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    return len(await _edits(emulator, token)) >= count


def _markup(body: dict) -> dict:  # type: ignore[type-arg]
    markup = body["reply_markup"]
    return json.loads(markup) if isinstance(markup, str) else markup


def _result(body: dict) -> dict:  # type: ignore[type-arg]
    result = body["result"]
    return json.loads(result) if isinstance(result, str) else result
