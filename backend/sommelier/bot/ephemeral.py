"""What concerns one person in a group goes to that person alone (issue 49, item 3).

Bot API 10.2 added ephemeral messages, shown to one member of a group; 10.3 moved their
parameters into `ephemeral_message_parameters` on sendMessage. python-telegram-bot 22.8 speaks
Bot API 10.0, so the parameter goes through `api_kwargs`. A chat that refuses one (the bot may
not send them there, or a server that predates them) is remembered for this process, and gets
its notices as before: in the group, quoting the person's message. Nothing is lost either way.
"""

from __future__ import annotations

import logging

from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest

log = logging.getLogger("sommelier.bot")

PARAMETERS = "ephemeral_message_parameters"


class Ephemeral:
    def __init__(self) -> None:
        self.refused: set[int] = set()  # chats that refused an ephemeral message

    async def send(
        self,
        bot: Bot,
        chat_id: int,
        user_id: int,
        text: str,
        *,
        html: bool = False,
        topic: int | None = None,
        markup: InlineKeyboardMarkup | None = None,
    ) -> bool:
        """Send `text` to `user_id` alone in the group; False when the chat does not take
        ephemeral messages (the caller then says it the usual way)."""
        if chat_id in self.refused:
            return False
        try:
            await bot.send_message(
                chat_id,
                text,
                parse_mode=ParseMode.HTML if html else None,
                message_thread_id=topic,
                reply_markup=markup,
                api_kwargs={PARAMETERS: {"receiver_user_id": user_id}},
            )
        except BadRequest as exc:
            self.refused.add(chat_id)
            log.info(
                "ephemeral message refused; notices go to the group",
                extra={"event": "ephemeral_refused", "error": str(exc)},
            )
            return False
        return True
