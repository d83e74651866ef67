"""Bottles added by message, against the Bot API emulator (issue 48, item 2): "I bought 6
bottles of …" gets the catalog's wine with a button that adds them (with the vintage and place
said), the wines it may be when unsure, or the wine as named; a press adds them to this chat's
cellar once (the group's, in a group) and takes the button off."""

from __future__ import annotations

from sqlalchemy import select

from sommelier.cellar.adding import NAME
from sommelier.db.models import Cellar, CellarBottle, CellarEvent
from tests.e2e.test_telegram_photos_inline import buttons
from tests.support.scripted import ScriptedModel, tools
from tests.support.telegram import TelegramUser, calls, new_token, running_bot

BOUGHT = "I bought 6 bottles of Catena Malbec 2019, they're in rack B"
CATENA = {"wine": "Catena Malbec", "bottles": 6, "vintage": 2019, "place": "rack B"}


async def _bottles(app) -> list[CellarBottle]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return list((await session.scalars(select(CellarBottle).order_by(CellarBottle.id))).all())


async def test_bottles_said_are_added_at_one_press_and_only_once(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7501)
    model = ScriptedModel([tools((NAME, CATENA))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say(BOUGHT)
        intro, card = await ana.wait_for(2)
        (add,) = buttons(card)
        before = await _bottles(sqlite_app)
        await ana.press(add[1])
        added = (await ana.wait_for(3))[2]
        await ana.press(add[1])  # a second press (another device, a double tap)
        again = (await ana.wait_for(4))[3]
        await ana.command("/cellar")
        listed = (await ana.wait_for(5))[4]
        edits = [c for c in await calls(telegram_emulator, token) if "ReplyMarkup" in c["method"]]
    assert intro["text"] == "Shall I add 6 bottles of this wine to your cellar?\n2019 · rack B"
    assert "Catena Malbec" in card["text"]
    assert add[0] == "➕ Add 6 bottles"
    assert buttons(intro) == []  # no 👍/👎, no "cheaper": nothing here was recommended
    assert before == []  # the turn added nothing: the press does
    assert added["text"] == (
        "Added to the cellar: 6 × Catena Malbec · 2019 · rack B. Bottles of it there now: 6."
    )
    assert again["text"] == "Already added to the cellar: Catena Malbec."
    assert "At their peak\n• 6 × Catena Malbec 2019 · rack B" in listed["text"]
    assert len(edits) == 1 and edits[0]["body"].get("reply_markup") in (None, "", "{}")
    (bottle,) = await _bottles(sqlite_app)
    assert (bottle.wine_id, bottle.quantity, bottle.vintage, bottle.location, bottle.source) == (
        "sm-059", 6, "2019", "rack B", "message"
    )  # fmt: skip
    async with sqlite_app.sessions() as session:
        (event,) = (await session.scalars(select(CellarEvent))).all()
    assert (event.kind, event.quantity) == ("added", 6)
    assert len(model.requests) == 1  # the proposal was the tool's: no answer call


async def test_when_unsure_the_person_chooses_the_wine_or_keeps_it_as_named(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7502)
    bought = {"wine": "Riesling", "bottles": 2, "vintage": None, "place": None}
    unknown = {"wine": "Château Imaginaire Grand Vin", "bottles": 3, "vintage": 2015, "place": None}
    model = ScriptedModel([tools((NAME, bought)), tools((NAME, unknown))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say("I got two bottles of Riesling")
        intro, *cards = await ana.wait_for(4)
        chosen = buttons(cards[2])
        await ana.press(chosen[0][1])  # the third: Dr. Loosen
        added = (await ana.wait_for(5))[4]
        await ana.say("We bought 3 bottles of Château Imaginaire Grand Vin 2015")
        asked = (await ana.wait_for(6))[5]
        (as_named,) = buttons(asked)
        await ana.press(as_named[1])
        kept = (await ana.wait_for(7))[6]
    assert intro["text"] == "Which one is it? I'll add 2 bottles of it to your cellar."
    assert [b[0] for b in chosen] == ["➕ Add 2 bottles", "✍️ Add it as I named it"]
    assert "Dr. Loosen Blue Slate Riesling Kabinett" in cards[2]["text"]
    assert added["text"].startswith("Added to the cellar: 2 × Dr. Loosen Blue Slate Riesling")
    assert asked["text"] == (
        "“Château Imaginaire Grand Vin” is not in the catalog. Shall I add 3 bottles of it as "
        "you named it?\n2015"
    )
    assert as_named[0] == "✍️ Add it as I named it"
    assert kept["text"] == (
        "Added to the cellar: 3 × Château Imaginaire Grand Vin · 2015. Bottles of it there now: 3."
    )
    riesling, own = await _bottles(sqlite_app)
    assert riesling.wine_id is not None and riesling.quantity == 2
    assert (own.wine_id, own.name, own.quantity, own.vintage) == (
        None, "Château Imaginaire Grand Vin", 3, "2015"
    )  # fmt: skip


async def test_in_a_group_the_bottles_go_to_the_groups_cellar(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7503)
    bob = TelegramUser(telegram_emulator, token, 7504, name="Bob")
    for member in (ana, bob):
        member.chat_type, member.chat_id = "group", -7500
    model = ScriptedModel([tools((NAME, CATENA))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say(f"@SommelierTestBot {BOUGHT}")
        _, card = await ana.wait_for(2)
        await bob.press(buttons(card)[0][1])  # a member adds them for the group
        await ana.wait_for(3)
    async with sqlite_app.sessions() as session:
        cellar = await session.scalar(select(Cellar))
    (bottle,) = await _bottles(sqlite_app)
    assert cellar is not None and (cellar.chat_id, cellar.user_id) == (-7500, None)
    assert bottle.cellar_id == cellar.id and bottle.quantity == 6
