"""The bot in group chats: it answers when it is mentioned (@name), replied to or given a
command; other chatter is none of its business and is never stored. A group's admins can let
it answer every message (/sommelier_all on|off). Replies quote the message they answer.

Each person's rate limit holds in a group too, and the group has its own, GROUP_FACTOR times a
person's: a busy group cannot keep the model to itself.
"""

from __future__ import annotations

import re

from telegram import Chat, Message, User
from telegram.constants import ChatMemberStatus, ChatType, MessageEntityType

GROUP_FACTOR = 3
ADMINS = (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


def is_group(chat: Chat | None) -> bool:
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


def called(message: Message, me: User) -> str | None:
    """The message's text for the bot when it mentions the bot or replies to it (the mention
    taken out: "@SommelierBot a red for pizza" → "a red for pizza"); None otherwise."""
    text = message.text or ""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == me.id:
        return text
    for entity in message.entities:
        said = message.parse_entity(entity)
        mine = (
            entity.type == MessageEntityType.MENTION
            and me.username is not None
            and said.lstrip("@").casefold() == me.username.casefold()
        ) or (entity.type == MessageEntityType.TEXT_MENTION and entity.user == me)
        if mine:
            return _without(text, said)
    if me.username and re.search(rf"@{re.escape(me.username)}\b", text, re.IGNORECASE):
        return _without(text, f"@{me.username}")  # clients that send no entities
    return None


def _without(text: str, mention: str) -> str:
    cut = re.sub(re.escape(mention) + ",?", " ", text, count=1, flags=re.IGNORECASE)
    return re.sub(r"\s{2,}", " ", cut).strip(" ,:")


def switch(argument: str) -> bool | None:
    """ "on" / "off" (and a few synonyms) → True / False; None for anything else."""
    word = argument.strip().casefold()
    if word in ("on", "yes", "1", "true", "all"):
        return True
    if word in ("off", "no", "0", "false", "mentions"):
        return False
    return None
