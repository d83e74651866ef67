"""The Telegram Bot API emulator (tests/telegram_emulator) and a bot running against it.

The emulator is a Node process on 127.0.0.1 started and stopped by a session fixture. Each test
uses its own bot token, so tests never see each other's messages.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from sommelier.agent.admission import Admission
from sommelier.app import App
from sommelier.bot.application import build_application
from sommelier.bot.handlers import BotOptions, SommelierBot
from sommelier.bot.queue import install_receiver, queue_app, run_worker

EMULATOR_DIR = Path(__file__).resolve().parents[1] / "telegram_emulator"
BOT_ID = 666  # the emulator's getMe
BOT = "sommelier_bot"  # application.bot_data key of the SommelierBot under test


class Emulator:
    def __init__(self) -> None:
        if not (EMULATOR_DIR / "node_modules").is_dir():
            raise RuntimeError(
                "the Telegram emulator is not installed: npm ci --prefix tests/telegram_emulator"
            )
        self.process = subprocess.Popen(
            ["node", str(EMULATOR_DIR / "server.js"), "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        self.port = json.loads(line)["port"]
        self.url = f"http://127.0.0.1:{self.port}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: httpx.AsyncClient | None = None

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        response = await self._client().post(path, json=body)
        return response.json()

    def _client(self) -> httpx.AsyncClient:
        # One client per event loop: each test runs on its own loop, and making a client
        # costs milliseconds (an SSL context) that would skew the benchmarks.
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._http = httpx.AsyncClient(base_url=self.url, timeout=10)
        assert self._http is not None
        return self._http

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class TelegramUser:
    """A person (and their private chat) talking to one bot token."""

    def __init__(self, emulator: Emulator, token: str, user_id: int, name: str = "Ana") -> None:
        self.emulator = emulator
        self.token = token
        self.user_id = user_id
        self.name = name
        self.chat_type = "private"
        self.chat_id = user_id  # a private chat's id is the person's; set another for a group
        self.language = "en"  # what their Telegram client reports (language_code)

    def _common(self) -> dict[str, Any]:
        return {
            "botToken": self.token,
            "date": int(time.time()),
            "from": {
                "id": self.user_id,
                "first_name": self.name,
                "is_bot": False,
                "username": self.name.lower(),
                "language_code": self.language,
            },
            "chat": {"id": self.chat_id, "type": self.chat_type, "first_name": self.name},
        }

    async def say(self, text: str, reply_to: int | None = None, topic: int | None = None) -> None:
        """A message; `reply_to`: a bot message's id it answers; `topic`: a forum topic."""
        body: dict[str, Any] = {**self._common(), "text": text}
        if reply_to is not None:
            body["reply_to_message"] = {
                "message_id": reply_to,
                "date": body["date"],
                "chat": body["chat"],
                "from": {"id": BOT_ID, "is_bot": True, "first_name": "Sommelier Test"},
                "text": "…",
            }
        if topic is not None:
            body["chat"] = {**body["chat"], "is_forum": True}
            body |= {"message_thread_id": topic, "is_topic_message": True}
        await self.emulator.post("/sendMessage", body)

    async def photo(self, image: bytes, caption: str = "") -> None:
        """A photo (the emulator keeps its bytes for getFile and the download)."""
        file_id = f"photo-{uuid.uuid4().hex}"
        encoded = base64.b64encode(image).decode()
        await self.emulator.post("/control/file", {"file_id": file_id, "base64": encoded})
        size = {"file_id": file_id, "file_unique_id": file_id, "width": 800, "height": 1000}
        body = {**self._common(), "photo": [size], "caption": caption}
        await self.emulator.post("/sendMessage", body)

    async def document(
        self, data: bytes, file_name: str, mime_type: str, caption: str = ""
    ) -> None:
        """A file sent as a document (the emulator keeps its bytes for getFile)."""
        file_id = f"doc-{uuid.uuid4().hex}"
        encoded = base64.b64encode(data).decode()
        await self.emulator.post("/control/file", {"file_id": file_id, "base64": encoded})
        document = {
            "file_id": file_id, "file_unique_id": file_id, "file_name": file_name,
            "mime_type": mime_type, "file_size": len(data),
        }  # fmt: skip
        body = {**self._common(), "document": document, "caption": caption}
        await self.emulator.post("/sendMessage", body)

    async def voice(self) -> None:
        voice = {"file_id": "v", "file_unique_id": "v", "duration": 3}
        await self.emulator.post("/sendMessage", {**self._common(), "voice": voice})

    async def inline(self, query: str, update: str = "inline_query") -> None:
        """An inline query ("@bot red under 20"), or with `update="chosen_inline_result"`
        the result this person sent (`query` is then the result's id)."""
        sender = self._common()["from"]
        if update == "inline_query":
            body = {"id": uuid.uuid4().hex, "from": sender, "query": query, "offset": ""}
        else:
            body = {"result_id": query, "from": sender, "query": ""}
        await self.emulator.post("/control/update", {"token": self.token, "update": {update: body}})

    async def guest(self, text: str, chat_id: int) -> str:
        """An @mention of the bot in a chat it is not in (Bot API 10.0 guest mode); returns the
        guest query's id."""
        common = self._common()
        chat = {"id": chat_id, "type": "group", "title": "Friends"}
        query_id = uuid.uuid4().hex
        body = {
            "message_id": 1, "date": common["date"], "chat": chat, "from": common["from"],
            "text": text, "guest_query_id": query_id,
            "guest_bot_caller_user": common["from"], "guest_bot_caller_chat": chat,
        }  # fmt: skip
        await self.emulator.post(
            "/control/update", {"token": self.token, "update": {"guest_message": body}}
        )
        return query_id

    async def stop_draft(self, draft_id: int = 1) -> None:
        """Telegram's own Stop on a streamed draft (Bot API 10.3): a `stopped_message_generation`
        update for this chat, as a client that shows the native button sends it."""
        body = {"chat": self._common()["chat"], "draft_id": draft_id}
        update = {"stopped_message_generation": body}
        await self.emulator.post("/control/update", {"token": self.token, "update": update})

    async def command(self, command: str) -> None:
        body = {
            **self._common(),
            "text": command,
            "entities": [{"offset": 0, "length": len(command.split()[0]), "type": "bot_command"}],
        }
        await self.emulator.post("/sendCommand", body)

    async def sticker(self) -> None:
        body = {
            **self._common(),
            "sticker": {
                "file_id": "x",
                "file_unique_id": "x",
                "type": "regular",
                "width": 1,
                "height": 1,
                "is_animated": False,
                "is_video": False,
            },
        }
        await self.emulator.post("/sendMessage", body)

    async def press(self, data: str) -> None:
        common = self._common()
        message = {
            "message_id": 1,
            "date": common["date"],
            "chat": common["chat"],
            "from": {"id": 1, "is_bot": True, "first_name": "Bot"},
            "text": "…",
        }
        await self.emulator.post(
            "/sendCallback",
            {
                "botToken": self.token,
                "date": common["date"],
                "from": common["from"],
                "message": message,
                "data": data,
                "chat_instance": str(self.chat_id),
            },
        )

    async def bot_messages(self) -> list[dict[str, Any]]:
        history = (await self.emulator.post("/getUpdatesHistory", {"token": self.token}))["result"]
        return [
            {**h["message"], "message_id": h.get("messageId")}
            for h in history
            if "message" in h
            and "botToken" in h
            and h.get("message", {}).get("chat_id") is not None
            and int(h["message"]["chat_id"]) == self.chat_id
        ]

    async def wait_for(self, count: int, timeout: float = 15.0) -> list[dict[str, Any]]:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        while True:
            messages = await self.bot_messages()
            if len(messages) >= count or time.monotonic() > deadline:
                return messages
            await asyncio.sleep(0.05)


async def unread(emulator: Emulator, token: str) -> int:
    """The updates the bot has not fetched yet."""
    return int((await emulator.post("/control/unread", {"token": token}))["result"])


async def all_fetched(emulator: Emulator, token: str) -> bool:
    """Whether the bot has fetched every update sent so far (a condition for `until`)."""
    return await unread(emulator, token) == 0


async def calls(emulator: Emulator, token: str) -> list[dict[str, Any]]:
    return (await emulator.post("/control/calls", {"token": token}))["result"]


async def flood(emulator: Emulator, token: str, method: str, count: int, retry_after: int) -> None:
    await emulator.post(
        "/control/flood",
        {"token": token, "method": method, "count": count, "retry_after": retry_after},
    )


async def fail(emulator: Emulator, token: str, method: str, count: int, after: int = 0) -> None:
    await emulator.post(
        "/control/fail", {"token": token, "method": method, "count": count, "after": after}
    )


async def admins(emulator: Emulator, token: str, chat_id: int, user_ids: list[int]) -> None:
    body = {"token": token, "chat_id": chat_id, "user_ids": user_ids}
    await emulator.post("/control/admins", body)


async def redeliver(emulator: Emulator, token: str, update_id: int) -> int:
    response = await emulator.post("/control/redeliver", {"token": token, "update_id": update_id})
    return response["result"]


def new_token() -> str:
    return f"{int(time.time()) % 10**9}:{uuid.uuid4().hex}"


@asynccontextmanager
async def running_bot(
    app: App,
    model: Any,
    emulator: Emulator,
    token: str,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[Any]:
    """The real PTB Application, polling the emulator, with a scripted model behind it. The
    model calls tools itself (the native strategy): these tests are about Telegram."""
    app.settings = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "telegram_bot_token": token,
            "telegram_base_url": emulator.url,
            "agent_strategy": "native",
            **(settings or {}),
        }
    )
    bot = SommelierBot(app.chat_service(model), BotOptions(**options))
    application = build_application(app.settings, bot)
    application.bot_data[BOT] = bot  # for a test that drives a part of it (the cellar's asks)
    await application.initialize()
    await application.start()
    await application.updater.start_polling(poll_interval=0.02, timeout=0)
    try:
        yield application
    finally:
        await application.updater.stop()
        await application.stop()
        await application.shutdown()


os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")


@asynccontextmanager
async def running_queued_bot(
    app: App,
    models: list[Any],
    emulator: Emulator,
    token: str,
    settings: dict[str, Any] | None = None,
) -> AsyncIterator[list[asyncio.Task[None]]]:
    """A bot behind the queue (bot/queue.py) on one PostgreSQL database, in this process: a
    receiving application that queues updates, and per model a worker with its own queue
    connection, application, bot and model, as a worker process has. Yields the workers'
    tasks: cancelling one stops that worker as SIGTERM would."""
    validated = app.settings.model_validate(
        {
            **app.settings.model_dump(),
            "telegram_bot_token": token,
            "telegram_base_url": emulator.url,
            "agent_strategy": "native",
            "telegram_queue": True,
            **(settings or {}),
        }
    )
    app.settings = validated
    receiving = SommelierBot(app.chat_service(models[0]))
    receiver = build_application(validated, receiving)
    async with contextlib.AsyncExitStack() as stack:
        workers = []
        for model in models:
            service = app.chat_service(model)
            # A queue of its own for each worker (agent/admission.py), for a server that answers
            # at least two at once; the queue worker processes share is chat/model_queue.py's.
            service.admission = Admission(max(2, app.admission().capacity))
            bot = SommelierBot(service)
            application = build_application(validated, bot, receives=False)
            queue = queue_app(validated.database_url)
            await stack.enter_async_context(application)
            await stack.enter_async_context(queue.open_async())
            await application.start()
            stack.push_async_callback(application.stop)
            concurrency = validated.telegram_max_concurrent_updates
            work = run_worker(queue, application, bot, concurrency, signals=False)
            worker = asyncio.create_task(work)
            stack.push_async_callback(_stopped, worker)
            workers.append(worker)
        queue = queue_app(validated.database_url)
        await stack.enter_async_context(queue.open_async())
        install_receiver(receiver, queue, receiving, validated.telegram_wait_notice_after)
        await stack.enter_async_context(receiver)
        await receiver.start()
        assert receiver.updater is not None
        await receiver.updater.start_polling(poll_interval=0.02, timeout=0)
        stack.push_async_callback(receiver.stop)
        stack.push_async_callback(receiver.updater.stop)
        yield workers


async def _stopped(worker: asyncio.Task[None]) -> None:
    worker.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await worker


def shown(message: dict[str, Any], token: str) -> list[tuple[str, str | None]]:
    """A bot message's buttons as a person sees them, each with the data the bot made it with
    once its signature is checked for that chat (None: a signature that does not hold)."""
    from sommelier.bot.signing import verified

    markup = message.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    chat_id = int(message["chat_id"])
    return [
        (b["text"], verified(token, chat_id, b["callback_data"]))
        for row in markup.get("inline_keyboard", [])
        for b in row
    ]
