"""When the bot takes a group message as meant for it (bot/groups.py); the links under inline
results (bot/inline.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from telegram import Chat, Message, MessageEntity, User

from sommelier.bot.groups import called, switch
from sommelier.bot.inline import result_id, start_of, wine_of_start

ME = User(666, "Sommelier", is_bot=True, username="SommelierBot")
ANA = User(1, "Ana", is_bot=False)
GROUP = Chat(-100, Chat.GROUP)


def message(text: str, entities: list[MessageEntity] = (), replied: User | None = None) -> Message:  # type: ignore[assignment]
    answered = Message(1, datetime.now(UTC), GROUP, from_user=replied) if replied else None
    return Message(
        2,
        datetime.now(UTC),
        GROUP,
        from_user=ANA,
        text=text,
        entities=list(entities),
        reply_to_message=answered,
    )


def mention(text: str, name: str) -> MessageEntity:
    return MessageEntity(MessageEntity.MENTION, text.index(name), len(name))


@pytest.mark.parametrize(
    ("msg", "said"),
    [
        # A mention, anywhere, in any case: the words without it.
        (message("@SommelierBot a red for pizza", [mention("@SommelierBot a", "@SommelierBot")]),
         "a red for pizza"),
        (message("what about @sommelierbot, any sparkling?",
                 [mention("what about @sommelierbot", "@sommelierbot")]), "what about any sparkling?"),
        # A reply to the bot's own message.
        (message("and something cheaper?", replied=ME), "and something cheaper?"),
        # Chatter: another bot mentioned, a reply to a person, no mention at all.
        (message("@OtherBot play music", [mention("@OtherBot play", "@OtherBot")]), None),
        (message("see you at 8", replied=ANA), None),
        (message("I love red wine"), None),
    ],
)  # fmt: skip
def test_the_bot_answers_a_group_message_only_when_it_is_called(
    msg: Message, said: str | None
) -> None:
    assert called(msg, ME) == said


def test_the_admin_switch_reads_on_and_off_and_nothing_else() -> None:
    assert [switch(w) for w in ("on", "OFF", "all", "maybe", "")] == [True, False, True, None, None]


@pytest.mark.parametrize("wine_id", ["sm-059", "xw-100123", "cave.12/ré", "x" * 60])
def test_a_why_link_carries_any_wine_id_within_telegram_s_start_parameter(wine_id: str) -> None:
    start = start_of(wine_id)
    assert start is not None and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", start)
    assert wine_of_start(start) == wine_id


def test_an_id_too_long_for_a_link_gets_no_button_and_a_short_result_id() -> None:
    long_id = "é" * 64  # 128 bytes
    assert start_of(long_id) is None
    assert len(result_id(long_id).encode()) <= 64 and result_id("sm-001") == "sm-001"
    assert wine_of_start("whyb_%%%") is None and wine_of_start("hello") is None
