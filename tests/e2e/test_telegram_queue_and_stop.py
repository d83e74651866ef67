"""Stop, the queue notice and the person's language, with python-telegram-bot against the Bot
API emulator: a running or waiting turn stops at the press of a button or /stop, is stored as
cancelled, and the chat's next message is answered; a person waiting for the model sees their
place; a German client gets the bot's own texts in German."""

from sqlalchemy import select

from sommelier.bot.signing import sign
from sommelier.db.models import InboundMessage
from tests.e2e.test_telegram_bot import STEAK, buttons
from tests.support.scripted import ScriptedModel, answer, from_results, reply, tools
from tests.support.telegram import TelegramUser, calls, new_token, running_bot, shown
from tests.support.waiting import until

WHITE = ("search_wines", {"type": "white", "food": "fish"})


async def statuses(app) -> list[str]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        rows = await session.scalars(select(InboundMessage).order_by(InboundMessage.id))
        return [row.status for row in rows]


async def test_stop_ends_the_running_turn_and_the_next_message_is_answered(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 2001)
    model = ScriptedModel([tools(WHITE), from_results()], delay=60)
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.say("a red under 20 euros for steak")
        await until(lambda: _has(sqlite_app, "received"))
        await user.press(sign(token, user.chat_id, "s:stop"))  # as a notice's Stop carries it
        (stopped,) = await user.wait_for(1)
        assert stopped["text"] == "Stopped."
        await until(lambda: _has(sqlite_app, "cancelled"))
        model.delay = 0
        await user.say("a white for fish")
        messages = await user.wait_for(4)
    assert messages[2]["text"].startswith("🍷 <b>1.")  # the next message got its card
    assert await statuses(sqlite_app) == ["cancelled", "ok"]


async def test_telegrams_own_stop_on_a_draft_ends_the_turn_like_the_button(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    """A live draft keeps the person from sending anything, /stop included: the native Stop
    (`stopped_message_generation`) reaches the running turn ahead of the chat's queue, the turn
    is stored cancelled, and the chat's next message is answered."""
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 2004)
    model = ScriptedModel([tools(WHITE), from_results()], delay=60)
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.say("a red under 20 euros for steak")
        await until(lambda: _has(sqlite_app, "received"))
        await user.stop_draft()
        await until(lambda: _has(sqlite_app, "cancelled"))
        model.delay = 0
        await user.say("a white for fish")

        async def carded() -> bool:  # the stop's notice and the reply's text may come first
            return any(m["text"].startswith("🍷 <b>1.") for m in await user.bot_messages())

        await until(carded)  # the next message's card
    assert await statuses(sqlite_app) == ["cancelled", "ok"]


async def test_slash_stop_reaches_a_turn_that_waits_for_the_model(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana, ben = (
        TelegramUser(telegram_emulator, token, 2002),
        TelegramUser(telegram_emulator, token, 2003, "Ben"),
    )
    model = ScriptedModel([tools(STEAK), answer(reply(["sm-059"]))], delay=1.5)
    async with running_bot(sqlite_app, model, telegram_emulator, token, notice_interval=0.1):
        await ana.say("a red under 20 euros for steak")
        await until(lambda: _has(sqlite_app, "received"))
        await ben.say("a white for fish")
        # Ben waits behind Ana: one message with his place and a Stop button.
        (notice,) = await ben.wait_for(1)
        assert notice["text"].startswith("⏳ 1 person ahead of you, about")
        assert buttons(notice) == [("⏹ Stop", sign(token, ben.chat_id, "s:stop"))]
        await ben.command("/stop")
        await until(lambda: _has(sqlite_app, "cancelled"))
        await ana.wait_for(3)
    assert sorted(await statuses(sqlite_app)) == ["answered", "cancelled", "ok"]  # + /stop
    deleted = [c for c in await calls(telegram_emulator, token) if c["method"] == "deleteMessage"]
    assert deleted  # the notice went away with the wait


async def test_a_german_client_gets_the_bots_own_texts_in_german(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 2004)
    user.language = "de"
    german = reply(["sm-059"], intro="Ein kräftiger Roter zum Steak.", closing="Noch etwas?")
    german["wines"][0]["why"] = "Reif und weich, mit dunklen Früchten."
    model = ScriptedModel([tools(STEAK), answer(german)])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.command("/help")
        (help_text,) = await user.wait_for(1)
        await user.say("Einen Rotwein unter 20 Euro zum Steak, bitte")
        *_, card, closing = await user.wait_for(4)
    assert "/stop – die Antwort anhalten" in help_text["text"]
    assert "Bewertungen" in card["text"] and "17,00\xa0€" in card["text"]
    assert ("💶 Günstiger", "f:cheaper:de") in shown(closing, token)
    asked = " ".join(m["content"] or "" for m in model.requests[-1]["messages"])
    assert "in German (Deutsch), not in English" in asked


async def _has(app, status: str) -> bool:  # type: ignore[no-untyped-def]
    return status in await statuses(app)
