"""When the bot takes a group message as meant for it (bot/groups.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from telegram import Chat, Message, MessageEntity, User

from sommelier.bot.groups import called, switch

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
