"""How the bot behaves in each group chat (`chat_settings`), as the group's admins set it."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from sommelier.db.models import ChatSetting, utcnow


class ChatSettings:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def answers_all(self, channel: str, chat_id: int) -> bool:
        async with self.sessions() as session:
            row = await session.get(ChatSetting, (channel, chat_id))
            return bool(row and row.answer_all)

    async def set_answer_all(self, channel: str, chat_id: int, on: bool, by: int | None) -> None:
        async with self.sessions() as session, session.begin():
            row = await session.get(ChatSetting, (channel, chat_id))
            if row is None:
                row = ChatSetting(channel=channel, chat_id=chat_id)
                session.add(row)
            row.answer_all, row.changed_by, row.changed_at = on, by, utcnow()
