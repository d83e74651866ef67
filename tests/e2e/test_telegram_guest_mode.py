"""Guest mode (Bot API 10.0) against the Bot API emulator: an @mention of the bot in a chat it
is not in gets one answer there through answerGuestQuery, from the catalog, with nothing
stored and no model call; an answer after Telegram's window is logged, not a failure."""

from __future__ import annotations

import json
import logging

from sqlalchemy import func, select

from sommelier.db.models import Conversation, InboundMessage
from tests.support.scripted import ScriptedModel
from tests.support.telegram import TelegramUser, calls, new_token, running_bot
from tests.support.waiting import until

FRIENDS = -100900  # a group the bot is not a member of


async def _guest_answers(emulator, token: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [c["body"] for c in await calls(emulator, token) if c["method"] == "answerGuestQuery"]


async def test_a_mention_in_a_chat_the_bot_is_not_in_gets_catalog_wines_there(
    sqlite_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1201)
    model = ScriptedModel([])  # no call may reach it
    caplog.set_level(logging.INFO)
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        asked = await ana.guest("@SommelierTestBot a red wine under 20 euros", FRIENDS)
        await until(lambda: _has_answers(telegram_emulator, token, 1))
        (sent,) = await _guest_answers(telegram_emulator, token)
        await ana.guest("@SommelierTestBot hello there", FRIENDS)
        await until(lambda: _has_answers(telegram_emulator, token, 2))
    result = _result(sent)
    assert sent["guest_query_id"] == asked
    text = result["input_message_content"]["message_text"]
    assert text.count("🍷 <b>") == 3 and "€" in text  # three wines, their prices
    link = result["reply_markup"]["inline_keyboard"][0][0]["url"]
    assert link.startswith("https://t.me/SommelierTestBot?start=why_")
    methods = {c["method"] for c in await calls(telegram_emulator, token)}
    assert "sendMessage" not in methods  # nothing went to the chat the bot is not in
    assert model.requests == []
    async with sqlite_app.sessions() as session:  # nothing of that chat was stored
        for table in (InboundMessage, Conversation):
            assert await session.scalar(select(func.count()).select_from(table)) == 0


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


def _result(body: dict) -> dict:  # type: ignore[type-arg]
    result = body["result"]
    return json.loads(result) if isinstance(result, str) else result
