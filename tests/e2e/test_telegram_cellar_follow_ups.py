"""The cellar's follow-ups against the Bot API emulator (issue 48, items 5 and 6): "🍾 Opened"
under a card of a wine in the cellar takes one bottle off; later the chat is asked how it was,
once, by PTB's JobQueue; the stars are the person's rating and their taste, and a reply to the
thanks is the rating's note. Weekly reminders are turned on and off under /cellar and say what
reached its peak or passed it since. A label's match is added to the cellar by its button."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select
from telegram.ext import Application

from sommelier.bot.asks import schedule
from sommelier.cellar.files import CellarRow
from sommelier.cellar.store import add_rows, cellar_of, owner_of
from sommelier.db.models import CellarBottle, CellarEvent, TasteProfile, utcnow
from sommelier.db.repositories import Person
from sommelier.db.session import as_utc
from tests.e2e.test_telegram_photos_inline import buttons
from tests.support.label_images import render_label
from tests.support.scripted import ScriptedModel, from_results, tools
from tests.support.telegram import BOT, TelegramUser, calls, new_token, running_bot
from tests.support.waiting import until

ANA_ID = 7401


ANA = Person(channel="telegram", telegram_id=ANA_ID, display_name="Ana", language="en")


async def _ana_adds(app, row: CellarRow, *, remind_now: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Bottles into Ana's cellar, as a file would add them; `remind_now`: her reminder is due."""
    async with app.sessions() as session, session.begin():
        cellar = await cellar_of(session, await owner_of(session, ANA))
        await add_rows(session, cellar, [row], None, "csv")
        if remind_now:
            cellar.remind_at = utcnow()


async def _ana_owns_two_malbecs(app) -> None:  # type: ignore[no-untyped-def]
    await _ana_adds(app, CellarRow(1, "Catena Malbec", 2, "Catena Zapata", "2021", "rack B"))


STEAK_FROM_CELLAR = ("search_wines", {"source": "open_own_bottle", "food": "steak", "query": ""})


@dataclass
class Opened:
    """Ana's bot, after she pressed "🍾 Opened" under the Malbec of the reply `messages`."""

    ana: TelegramUser
    token: str
    model: ScriptedModel
    application: Application  # type: ignore[type-arg]
    messages: list[dict]  # type: ignore[type-arg]
    card: dict  # type: ignore[type-arg]
    said: dict  # type: ignore[type-arg]  # the bot's answer to the press


@asynccontextmanager
async def _ana_opened_a_malbec(app, emulator) -> AsyncIterator[Opened]:  # type: ignore[no-untyped-def]
    """Ana owns two Malbecs, asks what to open with steak, and presses "🍾 Opened" under the
    Malbec's card; the bot runs until the block ends (asking is due at once)."""
    await _ana_owns_two_malbecs(app)
    token = new_token()
    ana = TelegramUser(emulator, token, ANA_ID)
    model = ScriptedModel([tools(STEAK_FROM_CELLAR), from_results(1)])
    async with running_bot(
        app, model, emulator, token, cellar_ask_after=timedelta(0)
    ) as application:
        await ana.say("What should I open with steak tonight?")
        messages = await ana.wait_for(3)
        card = next(m for m in messages if "Catena Malbec" in m["text"])
        (opened,) = [data for text, data in buttons(card) if text == "🍾 Opened"]
        await ana.press(opened)
        said = (await ana.wait_for(len(messages) + 1))[-1]
        yield Opened(ana, token, model, application, messages, card, said)


async def test_an_opened_bottle_is_taken_off_then_asked_about_once_and_rated(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    async with _ana_opened_a_malbec(sqlite_app, telegram_emulator) as opened:
        ana, messages, application, said = (
            opened.ana,
            opened.messages,
            opened.application,
            opened.said,
        )
        assert "In your cellar: 2 · rack B" in opened.card["text"]
        # Due at once (cellar_ask_after 0): the JobQueue asks, every 0.2 s from now on.
        schedule(application, application.bot_data[BOT], every=0.2)
        asked = (await ana.wait_for(len(messages) + 2, timeout=10))[-1]
        stars = dict(buttons(asked))
        await ana.press(stars["4★"])
        thanks = (await ana.wait_for(len(messages) + 3))[-1]
        await ana.say("Silky, and lovely with the steak.", reply_to=thanks["message_id"])
        noted = (await ana.wait_for(len(messages) + 4))[-1]
        await until(lambda: _asked_count(telegram_emulator, opened.token, 1))  # no second time:
        later = await ana.wait_for(len(messages) + 5, timeout=1)  # rounds go on meanwhile
    assert said["text"] == (
        "Opened: Catena Malbec 2021. Bottles of it left in the cellar: 1. "
        "I'll ask you later how it was."
    )
    assert asked["text"] == "How was the Catena Malbec 2021 you opened?"
    assert list(stars) == ["1★", "2★", "3★", "4★", "5★"]
    assert thanks["text"].startswith("Thanks: ★★★★☆ for Catena Malbec 2021.")
    assert noted["text"] == "Noted."
    assert len(later) == len(messages) + 4  # asked once; the note was no turn
    assert len(opened.model.requests) == 2  # one turn: the wine request's two calls
    async with sqlite_app.sessions() as session:
        bottle = await session.scalar(select(CellarBottle))
        events = {e.kind: e for e in await session.scalars(select(CellarEvent))}
        taste = await session.scalar(select(TasteProfile))
    assert bottle is not None and bottle.quantity == 1
    assert events["opened"].message_id == int(asked["message_id"])
    assert events["rated"].rating == 4.0
    assert events["rated"].note == "Silky, and lovely with the steak."
    assert taste is not None  # four stars: learnt as a 👍 on that wine
    assert "Malbec" in taste.likes.get("grape", []) or "Argentina" in taste.likes.get("country", [])


async def _asked_count(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    sent = [c for c in await calls(emulator, token) if c["method"] == "sendMessage"]
    return sum("you opened?" in c["body"].get("text", "") for c in sent) >= count


async def test_weekly_reminders_are_turned_on_under_the_list_and_say_what_changed(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    await _ana_owns_two_malbecs(sqlite_app)
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, ANA_ID)
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token) as application:
        await ana.command("/cellar")
        (listed,) = await ana.wait_for(1)
        (on,) = buttons(listed)
        await ana.press(on[1])
        turned_on = (await ana.wait_for(2))[1]
        # A week later, with a bottle past its peak added since: the round tells that one.
        await _add_past_rioja_and_a_week_passes(sqlite_app)
        schedule(application, application.bot_data[BOT], every=0.2)
        told = (await ana.wait_for(3, timeout=10))[2]
        await ana.command("/cellar")
        again = (await ana.wait_for(4))[3]
        (off,) = buttons(again)
        await ana.press(off[1])
        turned_off = (await ana.wait_for(5))[4]
        later = await ana.wait_for(6, timeout=1)  # rounds go on: nothing more is said
    assert on[0] == "🔔 Weekly reminders" and off[0] == "🔕 No more reminders"
    assert turned_on["text"].startswith("Reminders are on: once a week")
    assert told["text"].startswith("🔔 From your cellar this week:\n\nPast their peak\n")
    assert "La Rioja Alta Gran Reserva 904 2015 · rack A" in told["text"]
    assert "Catena Malbec" not in told["text"]  # it was there when they were turned on
    assert turned_off["text"] == "Reminders are off."
    assert len(later) == 5


async def _add_past_rioja_and_a_week_passes(app) -> None:  # type: ignore[no-untyped-def]
    rioja = CellarRow(
        2, "La Rioja Alta Gran Reserva 904", 1, "La Rioja Alta", "2015", "rack A",
        drink_from=2018, drink_until=2020,
    )  # fmt: skip
    await _ana_adds(app, rioja, remind_now=True)


async def test_a_labels_match_is_added_to_the_cellar_by_its_button(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, ANA_ID + 1)
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.photo(render_label(["Château Musar", "Bekaa Valley", "2016"], seed=2))
        _sure, card = await ana.wait_for(2, timeout=60)
        add = dict(buttons(card))["➕ Add to my cellar"]
        await ana.press(add)
        first = (await ana.wait_for(3))[2]
        await ana.press(add)  # a second bottle of it
        second = (await ana.wait_for(4))[3]
        await ana.command("/cellar")
        listed = (await ana.wait_for(5))[4]
    assert first["text"] == "Added a bottle of Château Musar to the cellar. Bottles of it now: 1."
    assert second["text"].endswith("Bottles of it now: 2.")
    assert "• 2 × Château Musar" in listed["text"]


async def test_the_person_says_when_to_be_asked_about_an_opened_bottle(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    async with _ana_opened_a_malbec(sqlite_app, telegram_emulator) as opened:
        when = dict(buttons(opened.said))
        await opened.ana.press(when["🗓 Ask in 3 days"])
        moved = (await opened.ana.wait_for(len(opened.messages) + 2))[-1]
        # Due at once by default (cellar_ask_after 0), now in three days: a round sends nothing.
        bot = opened.application.bot
        sent = await opened.application.bot_data[BOT].opened.send_due(bot)
    assert list(when) == ["🕗 Ask tonight", "📅 Ask tomorrow", "🗓 Ask in 3 days"]
    assert moved["text"] == "I'll ask you in 3 days how it was."
    assert sent == 0
    async with sqlite_app.sessions() as session:
        event = await session.scalar(select(CellarEvent).where(CellarEvent.kind == "opened"))
    assert event is not None and event.ask_at is not None
    due_in = as_utc(event.ask_at) - utcnow()
    assert timedelta(hours=71) < due_in <= timedelta(hours=72)
