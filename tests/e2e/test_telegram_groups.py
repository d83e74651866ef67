"""The bot in group chats (bot/groups.py), against the Bot API emulator: called by a mention or
a reply, deaf to other chatter (nothing stored), /sommelier_all for admins, forum topics."""

import json

import pytest
from sqlalchemy import select

from sommelier.db.models import Conversation, Feedback, InboundMessage, User
from tests.e2e.test_telegram_bot import STEAK, buttons
from tests.support.label_images import render_label
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.telegram import (
    TelegramUser,
    admins,
    all_fetched,
    calls,
    new_token,
    running_bot,
)
from tests.support.waiting import until


def info(text: str) -> dict:
    return reply([], "informational", intro=text, closing="")


def group_member(emulator, token: str, user_id: int, chat_id: int = -100700) -> TelegramUser:  # type: ignore[no-untyped-def]
    person = TelegramUser(emulator, token, user_id)
    person.chat_type, person.chat_id = "supergroup", chat_id
    return person


def quoted(message: dict) -> int | None:
    parameters = message.get("reply_parameters")
    if isinstance(parameters, str):
        parameters = json.loads(parameters)
    return parameters["message_id"] if parameters else None


async def stored_texts(app) -> list[str]:  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return list((await session.scalars(select(InboundMessage.text))).all())


async def test_in_a_group_the_bot_answers_a_mention_or_a_reply_and_nothing_else(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = group_member(telegram_emulator, token, 7001)
    model = ScriptedModel([answer(info("Soft tannins.")), answer(info("Grape skins."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say("anyone up for dinner on friday?")
        await ana.say("@SommelierTestBot, what does tannic mean?")
        (first,) = await ana.wait_for(1)
        await ana.say("I'd rather have white")  # to the group, not to the bot
        await ana.say("and where do they come from?", reply_to=first["message_id"])
        second = (await ana.wait_for(2))[1]
        await until(lambda: all_fetched(telegram_emulator, token))
    # The bot saw only what was meant for it, without its own name.
    asked = [r["messages"][-1]["content"] for r in model.requests]
    said = ["what does tannic mean?", "and where do they come from?"]
    assert asked == said
    assert await stored_texts(sqlite_app) == said
    # Each reply quotes the message it answers.
    assert quoted(first) is not None and quoted(second) is not None
    assert [first["text"], second["text"]] == ["Soft tannins.", "Grape skins."]


async def test_admins_alone_let_the_bot_answer_every_message_in_a_group(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    boss, guest = (
        group_member(telegram_emulator, token, 7002),
        group_member(telegram_emulator, token, 7003),
    )
    await admins(telegram_emulator, token, boss.chat_id, [boss.user_id])
    model = ScriptedModel([])  # the question is answered from the knowledge table
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await guest.command("/sommelier_all on")
        (refused,) = await guest.wait_for(1)
        await boss.command("/sommelier_all on")
        await boss.wait_for(2)
        await guest.say("what does a decanter do?")  # no mention: answered now
        answered = (await guest.wait_for(3))[2]
        await boss.command("/sommelier_all off")
        await boss.wait_for(4)
        await guest.say("thanks all")  # chatter again
        await until(lambda: all_fetched(telegram_emulator, token))
        messages = await guest.wait_for(5, timeout=1)
    assert "Only the group's admins" in refused["text"]
    assert answered["text"].startswith("Decant red wine") and model.requests == []
    assert len(messages) == 4 and "mentioned or replied to" in messages[-1]["text"]


async def test_each_forum_topic_is_a_conversation_and_its_replies_stay_in_it(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = group_member(telegram_emulator, token, 7004, chat_id=-100800)
    model = ScriptedModel([answer(info("Two days.")), answer(info("Three days."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say("@SommelierTestBot how long does an open red keep?", topic=42)
        await ana.wait_for(1)
        await ana.say("@SommelierTestBot how long does an open port keep?", topic=43)
        first, second = await ana.wait_for(2)
    assert [int(first["message_thread_id"]), int(second["message_thread_id"])] == [42, 43]
    typing = [c["body"] for c in await calls(telegram_emulator, token) if c["method"] == "sendChatAction"]  # fmt: skip
    assert typing and {int(b["message_thread_id"]) for b in typing} <= {42, 43}
    assert quoted(first) is not None and second["text"] == "Three days."
    # The second topic did not see the first topic's history.
    assert [m["role"] for m in model.requests[1]["messages"]] == ["system", "system", "user"]
    async with sqlite_app.sessions() as session:
        topics = (await session.scalars(select(Conversation.topic_id))).all()
    assert sorted(topics) == [42, 43]


async def test_the_rate_limit_holds_per_person_and_per_group(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana, ben, cai, dan = (group_member(telegram_emulator, token, 7010 + n) for n in range(4))
    model = ScriptedModel([answer(info(f"ok {n}")) for n in range(3)])
    # One message a minute per person, three per group (GROUP_FACTOR).
    async with running_bot(sqlite_app, model, telegram_emulator, token, rate_limit_per_minute=1):
        await ana.say("@SommelierTestBot what is a magnum?")
        await ana.wait_for(1)
        await ana.say("@SommelierTestBot and a jeroboam?")  # ana's second this minute
        await ana.wait_for(2)
        for n, person in enumerate((ben, cai, dan)):
            await person.say(f"@SommelierTestBot question {n}")
            await person.wait_for(3 + n)
        messages = await dan.wait_for(5)
    texts = [m["text"] for m in messages]
    assert texts[0] == "ok 0" and texts[2:4] == ["ok 1", "ok 2"]
    # Ana is over her own limit; Dan is within his, but the group has had its three.
    assert texts[1].startswith("You're writing faster than I can taste!")
    assert texts[4].startswith("You're writing faster than I can taste!")
    assert len(model.requests) == 3


async def test_in_a_group_each_person_s_thumbs_count_as_their_own(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana, ben = (
        group_member(telegram_emulator, token, 7020),
        group_member(telegram_emulator, token, 7021),
    )
    model = ScriptedModel(
        [tools(STEAK), answer(reply(["sm-059"], intro="One red.", closing="More?"))]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say("@SommelierTestBot a red under 20 for steak?")
        card = (await ana.wait_for(3))[1]
        up, down = [data for _, data in buttons(card)]
        await ana.press(up)
        await ben.press(down)
        await until(lambda: all_fetched(telegram_emulator, token))

        async def both_stored() -> bool:
            async with sqlite_app.sessions() as session:
                return len((await session.scalars(select(Feedback))).all()) == 2

        await until(both_stored)
    async with sqlite_app.sessions() as session:
        rows = (
            await session.execute(
                select(User.telegram_id, Feedback.wine_id, Feedback.value).join(User)
            )
        ).all()
    assert sorted(rows) == [(7020, "sm-059", 1), (7021, "sm-059", -1)]


def _ephemeral_to(call: dict) -> int | None:  # type: ignore[type-arg]
    """Whom a sendMessage was for alone (Bot API 10.2 ephemeral), or None: the whole chat."""
    parameters = call["body"].get("ephemeral_message_parameters")
    if isinstance(parameters, str):
        parameters = json.loads(parameters)
    return int(parameters["receiver_user_id"]) if parameters else None


async def _sent(emulator, token: str, chat_id: int) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [
        c
        for c in await calls(emulator, token)
        if c["method"] == "sendMessage" and int(c["body"]["chat_id"]) == chat_id
    ]


async def test_in_a_group_what_concerns_one_person_goes_to_them_alone(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana, ben = (group_member(telegram_emulator, token, 7030 + n, -100730) for n in range(2))
    model = ScriptedModel([answer(info("A magnum holds 1.5 litres."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token, rate_limit_per_minute=1):
        await ana.say("@SommelierTestBot what is a magnum?")
        await ana.wait_for(1)
        await ana.say("@SommelierTestBot and a jeroboam?")  # over her limit
        await ben.command("/profile")
        await ben.command("/sommelier_all on")  # Ben is no admin
        await ana.wait_for(4)
        sent = await _sent(telegram_emulator, token, ana.chat_id)
    to = {call["body"]["text"][:30]: _ephemeral_to(call) for call in sent}
    assert to["A magnum holds 1.5 litres."] is None  # the answer is for the group
    assert to["You're writing faster than I c"] == ana.user_id
    assert to["I don't remember anything abou"] == ben.user_id
    assert to["Only the group's admins can ch"] == ben.user_id


async def test_a_group_that_refuses_ephemeral_messages_gets_the_notice_as_before(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = group_member(telegram_emulator, token, 7040, -100740)
    await telegram_emulator.post("/control/no_ephemeral", {"token": token, "chat_id": ana.chat_id})
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.command("/profile")
        (first,) = await ana.wait_for(1)
        await ana.command("/profile")
        await ana.wait_for(2)
        sent = await _sent(telegram_emulator, token, ana.chat_id)
    assert first["text"].startswith("I don't remember anything")  # nothing lost
    # One refused try; then the chat is known, and the second goes to the group at once.
    assert [_ephemeral_to(call) for call in sent] == [ana.user_id, None, None]


@pytest.mark.parametrize("refuses", [False, True])
async def test_a_photos_is_it_one_of_these_goes_to_the_sender_alone(
    sqlite_app, telegram_emulator, refuses: bool
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = group_member(telegram_emulator, token, 7050, -100750)
    if refuses:
        await telegram_emulator.post("/control/no_ephemeral", {"token": token, "chat_id": ana.chat_id})  # fmt: skip
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        # Which of the catalog's two Catena Malbecs? A close call: the sender is asked.
        await ana.photo(render_label(["Catena", "Malbec"], seed=3), caption="@SommelierTestBot")
        (choice,) = await ana.wait_for(1, timeout=60)
        sent = await _sent(telegram_emulator, token, ana.chat_id)
    assert choice["text"] == "Not sure: is it one of these?"
    names = [text for text, _ in buttons(choice)]
    assert len(names) == 2 and all(name.startswith("Catena") for name in names)
    expected = [ana.user_id, None] if refuses else [ana.user_id]  # refused: then to the group
    assert [_ephemeral_to(call) for call in sent] == expected
