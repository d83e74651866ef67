"""Button data is the person's to forge (issue 46, item 6): Bob presses every kind of button
the bot makes, copied from Ana's chat or written by hand, on PostgreSQL (whose INTEGER keys end
at 2³¹). He learns nothing of her, nothing reaches the database, every press is answered, and
nothing fails; Ana's own buttons still work."""

from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import func, select

from sommelier.db.models import Feedback
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.telegram import TelegramUser, calls, new_token, running_bot
from tests.support.waiting import until

pytestmark = pytest.mark.postgres

STEAK = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})


def _buttons(message: dict) -> list[str]:  # type: ignore[type-arg]
    markup = message.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return [b["callback_data"] for row in markup.get("inline_keyboard", []) for b in row]


async def _answered(emulator, token: str) -> int:  # type: ignore[no-untyped-def]
    return sum(c["method"] == "answerCallbackQuery" for c in await calls(emulator, token))


async def test_forged_buttons_of_every_kind_tell_another_chat_nothing(
    pg_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1106)
    bob = TelegramUser(telegram_emulator, token, 1107, name="Bob")
    model = ScriptedModel(
        [tools(STEAK), answer(reply(["sm-059"], intro="One red.", closing="More?"))]
    )
    caplog.set_level(logging.WARNING)
    async with running_bot(pg_app, model, telegram_emulator, token):
        await ana.say("a red under 20 euros for steak")
        ana_messages = await ana.wait_for(3)
        copied = [data for message in ana_messages for data in _buttons(message)]
        kinds = {data.split(":")[0] for data in copied}
        assert {"v", "m", "f"} <= kinds, copied  # votes, "More about", follow-ups
        unsigned = [data.rpartition("~")[0] for data in copied]
        by_hand = [
            f"v:{2**31}:0:1", f"v:{2**63}:1:0", "v:9999999999999999999:0:1", f"m:{2**31}:1:en",
            "m:1:1:en", "v:1:1:1", "lw:sm-059", "ex:0", "r:retry", "r:new", "s:stop", "f:x:en",
            "", "~", "garbage~AAAAAAAA",
        ]  # fmt: skip
        presses = copied + unsigned + by_hand
        for data in presses:
            await bob.press(data)
        await until(lambda: _answered_all(telegram_emulator, token, len(presses)), timeout=30)

        await ana.press(next(d for d in copied if d.startswith("v:")))  # her own 👍 counts
        await until(lambda: _answered_all(telegram_emulator, token, len(presses) + 1))
        async with pg_app.sessions() as session:
            votes = await session.scalar(select(func.count()).select_from(Feedback))
    assert await bob.bot_messages() == []  # no turn ran for him, nothing of Ana's was said
    assert len(model.requests) == 2  # Ana's turn alone
    assert votes == 1
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures == [], [r.getMessage() for r in failures]


async def _answered_all(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    return await _answered(emulator, token) >= count
