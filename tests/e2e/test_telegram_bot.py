"""The real python-telegram-bot Application against a Bot API emulator, with a scripted model."""

import asyncio
import json

from sqlalchemy import select

from sommelier.bot.signing import sign
from sommelier.chat.guard import WELCOME
from sommelier.db.models import InboundMessage
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.telegram import (
    TelegramUser,
    all_fetched,
    calls,
    fail,
    flood,
    new_token,
    redeliver,
    running_bot,
    shown,
)
from tests.support.waiting import until

STEAK = ("search_wines", {"type": "red", "max_price": 20, "food": "steak"})
# A recommendation's intro and closing, said from data (chat/reasons.py).
INTRO = "Wines that are red and at €20.00 or less:"
CLOSING = "Ask me how to serve them, which suits your dish best, or for something cheaper."


class FakeClock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds
        await asyncio.sleep(0)


async def _parts_sent(app, count: int) -> bool:  # type: ignore[no-untyped-def]
    rows = await inbound_rows(app)
    return bool(rows) and rows[0].parts_sent == count


def info(text: str) -> dict:
    return reply([], "informational", intro=text, closing="")


def buttons(message) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    markup = message.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [
        (b["text"], b["callback_data"]) for row in markup.get("inline_keyboard", []) for b in row
    ]


async def test_start(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1001)
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await user.command("/start")
        (welcome,) = await user.wait_for(1)
    assert "Hello, Ana! I'm Sommelier." in welcome["text"] and "18+" in welcome["text"]
    assert welcome["parse_mode"] == "HTML"
    examples = shown(welcome, token)
    assert len(examples) == 3 and examples[0] == ("A red under 20 euros for steak", "ex:0")


async def inbound_rows(app):  # type: ignore[no-untyped-def]
    async with app.sessions() as session:
        return list(
            (await session.scalars(select(InboundMessage).order_by(InboundMessage.id))).all()
        )


async def test_recommendation_with_cards_and_buttons(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1002)
    model = ScriptedModel(
        [
            tools(STEAK),
            answer(
                reply(["sm-059"], intro="For steak", closing="Want something cheaper?")
                | {"wines": [{"wine_id": "sm-059", "why": "Steak <3 & Malbec, a classic."}]}
            ),
        ]
    )
    # The model's own sentence per wine (SOMMELIER_WINE_SENTENCE=model, for a strong model).
    settings = {"wine_sentence": "model"}
    async with running_bot(sqlite_app, model, telegram_emulator, token, settings):
        await user.say("a red under 20 euros for steak")
        intro, card, closing = await user.wait_for(3)
    # What was searched, the reasons and the closing are said from data; the model's own
    # sentence stays beside the reasons, its HTML escaped.
    assert intro["text"] == "Wines that are red and at €20.00 or less:"
    assert "<b>1. Catena Malbec</b>" in card["text"]
    for fact in ("Catena Zapata", "Mendoza, Argentina", "Malbec", "€17.00", "★ 3.9"):
        assert fact in card["text"]
    assert "A classic match for beef." in card["text"]
    assert "Steak &lt;3 &amp; Malbec, a classic." in card["text"]
    assert closing["text"].startswith("Ask me how to serve them")
    (row,) = await inbound_rows(sqlite_app)
    reply_id = row.reply_message_id
    assert shown(closing, token) == [
        ("💶 Cheaper", "f:cheaper:en"),
        ("🔄 Something different", "f:different:en"),
        ("ℹ️ More about 1", f"m:{row.id}:1:en"),
        ("👍", f"v:{reply_id}:0:1"),
        ("👎", f"v:{reply_id}:0:0"),
    ]
    assert shown(card, token) == [("👍", f"v:{reply_id}:1:1"), ("👎", f"v:{reply_id}:1:0")]
    methods = [c["method"] for c in await calls(telegram_emulator, token)]
    assert methods.index("sendChatAction") < methods.index("sendMessage")
    (row,) = await inbound_rows(sqlite_app)
    assert row.status == "ok" and row.parts_sent == 3 and len(row.reply_parts) == 3


async def test_button_press_runs_as_a_turn(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1003)
    model = ScriptedModel(
        [
            tools(STEAK),
            answer(reply(["sm-059"], intro="One red.", closing="More?")),
            tools(("get_wine", {"ids": ["sm-059"]})),
            answer(info("Catena Malbec comes from high vineyards.")),
        ]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.say("a red under 20 euros for steak")
        *_, closing = await user.wait_for(3)
        (more,) = [data for text, data in buttons(closing) if text.startswith("ℹ️")]
        assert more.startswith("m:") and len(more.encode()) <= 64  # signed, within Telegram's
        await user.press(more)
        answer_message = (await user.wait_for(4))[-1]
    assert "high vineyards" in answer_message["text"]
    methods = [c["method"] for c in await calls(telegram_emulator, token)]
    assert methods.index("answerCallbackQuery") < len(methods) - 1 - methods[::-1].index(
        "sendMessage"
    )
    asked = model.requests[2]["messages"][-1]["content"]
    assert asked == "Tell me more about Catena Malbec (wine id sm-059)."


async def test_another_chats_more_about_button_tells_nothing(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    """Button data is the person's to forge: Bob pressing Ana's "More about" (the reply ids are
    sequential) learns nothing of her recommendation, and an id past the key's range is no
    error; both presses are answered, and no turn runs."""
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1006)
    bob = TelegramUser(telegram_emulator, token, 1007, name="Bob")
    model = ScriptedModel(
        [
            tools(STEAK),
            answer(reply(["sm-059"], intro="One red.", closing="More?")),
            answer(info("Hello, Bob.")),
        ]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.say("a red under 20 euros for steak")
        *_, closing = await ana.wait_for(3)
        (more,) = [data for text, data in buttons(closing) if text.startswith("ℹ️")]
        await bob.press(more)
        await bob.press(f"m:{2**31}:1:en")
        await until(lambda: _answered_callbacks(telegram_emulator, token, 2))
        # Bob's next message is answered after his presses: his chat holds that answer alone.
        await bob.say("hello")
        await bob.wait_for(1)
        assert [m["text"] for m in await bob.bot_messages()] == ["Hello, Bob."]
    assert len(model.requests) == 3  # Ana's turn and Bob's hello, nothing for the presses


async def _answered_callbacks(emulator, token: str, count: int) -> bool:  # type: ignore[no-untyped-def]
    return sum(c["method"] == "answerCallbackQuery" for c in await calls(emulator, token)) >= count


async def test_new_starts_a_fresh_conversation(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1004)
    model = ScriptedModel(
        [
            answer(info("Hello!")),
            answer(info("Hello again!")),
        ]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.say("hi")
        await user.wait_for(1)
        await user.command("/new")
        await user.wait_for(2)
        await user.say("hi again")
        messages = await user.wait_for(3)
    assert messages[1]["text"] == "Fresh start! What are you in the mood for?"
    # The system prompt, the turn's note (language) and "hi again": no old history.
    assert [m["role"] for m in model.requests[1]["messages"]] == ["system", "system", "user"]


async def test_flood_limit_is_waited_out(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1005)
    model = ScriptedModel([answer(info("Hello, I'm Sommelier."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await flood(telegram_emulator, token, "sendMessage", 2, 1)
        await user.say("who are you?")
        (message,) = await user.wait_for(1, timeout=20)
    assert message["text"] == "Hello, I'm Sommelier."
    methods = [c["method"] for c in await calls(telegram_emulator, token)]
    assert methods.count("sendMessage:flooded") == 2 and methods.count("sendMessage") == 1


async def test_redelivered_update_is_not_answered_twice(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1006)
    model = ScriptedModel([answer(info("Once only.")), answer(info("And the next."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.say("hello")
        await user.wait_for(1)
        (row,) = await inbound_rows(sqlite_app)
        assert await redeliver(telegram_emulator, token, row.update_id) == 1
        # The chat's updates run in order: once the next one is answered, the redelivered
        # one has been handled.
        await user.say("and then?")
        messages = await user.wait_for(2)
    assert [m["text"] for m in messages] == ["Once only.", "And the next."]
    assert len(model.requests) == 2


async def test_interrupted_reply_resumes_with_the_missing_parts(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1007)
    model = ScriptedModel(
        [
            tools(STEAK),
            answer(reply(["sm-059"], intro="Intro.", closing="End?")),
            answer(info("You're welcome.")),
        ]
    )
    clock = FakeClock()  # the background redelivery's backoff: 1, 2 s, then past 5 s
    options = {
        "redelivery_delay": 1,
        "delivery_deadline": 5,
        "clock": clock.now,
        "sleep": clock.sleep,
    }
    async with running_bot(sqlite_app, model, telegram_emulator, token, **options):
        # The intro goes out; then every try of the card's send fails (network down), and the
        # bot gives up with a notice.
        await fail(telegram_emulator, token, "sendMessage", 4, after=1)
        await user.say("a red under 20 euros for steak")
        await user.wait_for(2, timeout=30)
        (row,) = await inbound_rows(sqlite_app)
        assert row.status == "undelivered" and row.parts_sent == 1
        # Telegram redelivers the update (e.g. after a restart): the rest is sent, once.
        await redeliver(telegram_emulator, token, row.update_id)
        await user.say("thanks!")  # answered after the redelivered update, in order
        messages = await user.wait_for(5)
    assert [m["text"].split("\n")[0] for m in messages] == [
        INTRO,
        "I couldn't get my whole answer to you. Shall I try again?",
        "🍷 <b>1. Catena Malbec</b>",
        CLOSING,
        WELCOME,  # thanks get the bot's own welcome, whatever the model wrote
    ]
    assert len(model.requests) == 3  # the model was not asked again for the first


async def test_two_chats_at_once_with_one_slow_model(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    slow, fast = (
        TelegramUser(telegram_emulator, token, 2001),
        TelegramUser(telegram_emulator, token, 2002, name="Bo"),
    )

    thinking, release = asyncio.Event(), asyncio.Event()

    class PerUserModel(ScriptedModel):
        async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
            messages = request.messages
            if messages[-1]["content"] == "slow question":
                thinking.set()
                await release.wait()
            return answer(info(f"re: {messages[-1]['content']}"))

    # A model that serves several chats at once (llama-server --parallel): this is about the
    # bot's per-chat ordering, not the model's queue (tests/integration/test_queue.py).
    parallel = {"llm_concurrency": 4}
    async with running_bot(
        sqlite_app, PerUserModel([]), telegram_emulator, token, settings=parallel
    ):
        await slow.say("slow question")
        await thinking.wait()
        await fast.say("fast question")
        (fast_reply,) = await fast.wait_for(1, timeout=5)
        assert await slow.bot_messages() == []  # the slow one is still thinking
        release.set()
        (slow_reply,) = await slow.wait_for(1, timeout=10)
    assert fast_reply["text"] == "re: fast question"
    assert slow_reply["text"] == "re: slow question"


async def test_one_chat_runs_in_order(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 2003)
    seen: list[str] = []

    release = asyncio.Event()

    class Recording(ScriptedModel):
        async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
            text = request.messages[-1]["content"]
            seen.append(f"start {text}")
            if text == "first":
                await release.wait()
            seen.append(f"end {text}")
            return answer(info(f"re: {text}"))

    async with running_bot(sqlite_app, Recording([]), telegram_emulator, token):
        for text in ("first", "second", "third"):
            await user.say(text)
        # The bot has all three while the first is still being answered.
        await until(lambda: all_fetched(telegram_emulator, token))
        await until(lambda: seen == ["start first"])
        release.set()
        messages = await user.wait_for(3)
    assert [m["text"] for m in messages] == ["re: first", "re: second", "re: third"]
    assert seen == [
        "start first",
        "end first",
        "start second",
        "end second",
        "start third",
        "end third",
    ]


async def test_limits_and_non_text(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 2004)
    # Answers take a moment, as a real model's do: the notice must not wait for them.
    model = ScriptedModel([answer(info(f"ok {i}")) for i in range(2)], delay=0.5)
    async with running_bot(
        sqlite_app, model, telegram_emulator, token, rate_limit_per_minute=2, max_input_chars=50
    ):
        await user.sticker()
        await user.wait_for(1)
        await user.say("x" * 51)
        await user.wait_for(2)
        for i in range(3):
            await user.say(f"question {i}")
        messages = await user.wait_for(5)
    texts = [m["text"] for m in messages]
    assert texts[0].startswith("I read text and photos of wine labels")
    assert texts[1] == "That's a long message! Please keep it under 50 characters."
    # Over the limit, the third question is answered on arrival, not after the other two.
    assert texts[2].startswith("You're writing faster than I can taste!")
    assert texts[3:5] == ["ok 0", "ok 1"]
    statuses = sorted(r.status for r in await inbound_rows(sqlite_app))
    assert statuses == sorted(["answered", "too_long", "ok", "ok", "rate_limited"])


async def test_webhook_refuses_requests_without_the_secret_token(
    sqlite_app, telegram_emulator, caplog
) -> None:  # type: ignore[no-untyped-def]
    import logging
    import socket
    import time

    import httpx

    from sommelier.bot.application import build_application
    from sommelier.bot.handlers import SommelierBot
    from sommelier.bot.runner import WEBHOOK_PATH

    token = new_token()
    user = TelegramUser(telegram_emulator, token, 3001)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sqlite_app.settings = sqlite_app.settings.model_validate(
        {
            **sqlite_app.settings.model_dump(),
            "telegram_bot_token": token,
            "telegram_base_url": telegram_emulator.url,
            "agent_strategy": "native",
        }
    )
    model = ScriptedModel([answer(info("Hello from the webhook."))])
    application = build_application(
        sqlite_app.settings,
        SommelierBot(sqlite_app.chat_service(model)),
    )
    await application.initialize()
    await application.start()
    url = f"http://127.0.0.1:{port}/{WEBHOOK_PATH}"
    await application.updater.start_webhook(
        listen="127.0.0.1",
        port=port,
        url_path=WEBHOOK_PATH,
        webhook_url=url,
        secret_token="s3cret-token",
    )
    update = {
        "update_id": 77,
        "message": {
            "message_id": 5,
            "date": int(time.time()),
            "text": "hi",
            "chat": {"id": 3001, "type": "private"},
            "from": {"id": 3001, "is_bot": False, "first_name": "Wu"},
        },
    }
    try:
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json=update)
            wrong = await http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "nope"}
            )
            secret = {"X-Telegram-Bot-Api-Secret-Token": "s3cret-token"}
            accepted = await http.post(url, json=update, headers=secret)
            (message,) = await user.wait_for(1)
            # Bodies that are no update, from someone who has the secret: refused or dropped,
            # one warning each, nothing stored, nothing answered.
            forged = {**update, "update_id": "abc", "message": {**update["message"], "text": "x"}}
            strangers = [
                await http.post(url, content=body, headers={**secret, "content-type": ctype})
                for body, ctype in (("[]", "application/json"), ("null", "application/json"))
            ]
            strangers.append(await http.post(url, json=forged, headers=secret))
            await until(lambda: any("dropped" in r.getMessage() for r in caplog.records))
    finally:
        await application.updater.stop()
        await application.stop()
        await application.shutdown()
    assert (refused.status_code, wrong.status_code, accepted.status_code) == (403, 403, 200)
    assert message["text"] == "Hello from the webhook."
    assert len(model.requests) == 1  # only the request with the secret reached the bot
    assert [r.status_code for r in strangers] == [400, 400, 200]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.update_id for r in await inbound_rows(sqlite_app)] == [77]
    assert len(await user.bot_messages()) == 1


DELIMITED_META = {
    "response_type": "recommendation",
    "wines": [{"wine_id": "sm-059", "why": "Plush Malbec."}],
    "closing": "Cheaper?",
    "guard": None,
}


async def delimited_turn(app, emulator, user_id: int, answers: list, chunk_delay: float):  # type: ignore[no-untyped-def]
    """One streamed turn in a private chat with the delimited protocol: the person's messages
    and every Bot API call the bot made."""
    token = new_token()
    user = TelegramUser(emulator, token, user_id)
    model = ScriptedModel([tools(STEAK), *answers], chunk=5, chunk_delay=chunk_delay)
    settings = {"output_protocol": "delimited"}
    async with running_bot(app, model, emulator, token, settings=settings, draft_interval=0.05):
        await user.say("a red under 20 euros for steak")
        messages = await user.wait_for(3)
    return messages, await calls(emulator, token)


async def test_drafts_show_the_answer_forming_before_the_final_messages(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    text = "A red for your steak, under twenty euros and full of fruit.\n"
    messages, recorded = await delimited_turn(
        sqlite_app, telegram_emulator, 5001,
        [answer(text + "---\n" + json.dumps(DELIMITED_META))], chunk_delay=0.02,
    )  # fmt: skip
    methods = [c["method"] for c in recorded]
    drafts = [c["body"].get("text", "") for c in recorded if c["method"] == "sendMessageDraft"]
    assert len(drafts) >= 2  # the answer forms over several updates
    assert methods.index("sendMessageDraft") < methods.index("sendMessage")
    # Only text of the validated answer is ever drafted: never the delimiter or the JSON.
    assert all(text.startswith(d) for d in drafts) and drafts[-1] == text
    # The final intro of a recommendation is said from data, in place of the drafted words.
    assert messages[0]["text"] == INTRO
    assert "Catena Malbec" in messages[1]["text"]


async def test_repair_clears_the_draft_and_types_again(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    good = "Here is a lovely red for you.\n---\n" + json.dumps(DELIMITED_META)
    messages, recorded = await delimited_turn(
        sqlite_app, telegram_emulator, 5002,
        [answer("A half-wrong answer with no delimiter at all, sorry."), answer(good)],
        chunk_delay=0.03,
    )  # fmt: skip
    drafts = [
        (i, c["body"].get("text", ""))
        for i, c in enumerate(recorded)
        if c["method"] == "sendMessageDraft"
    ]
    cleared = next(i for i, text in drafts if text == "")
    assert any("half-wrong" in text for i, text in drafts if i < cleared)
    assert recorded[cleared + 1]["method"] == "sendChatAction"  # "typing…" again
    assert all("half-wrong" not in text for i, text in drafts if i > cleared)
    assert all("half-wrong" not in m["text"] for m in messages)  # never a real message


async def test_group_chats_get_no_drafts(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    group = TelegramUser(telegram_emulator, token, 5003)
    group.chat_type = "group"
    model = ScriptedModel([answer(info("Hello group."))], chunk=3, chunk_delay=0.02)
    async with running_bot(sqlite_app, model, telegram_emulator, token, draft_interval=0.02):
        await group.say("@SommelierTestBot hi all")
        (message,) = await group.wait_for(1)
    methods = [c["method"] for c in await calls(telegram_emulator, token)]
    assert message["text"] == "Hello group." and "sendMessageDraft" not in methods
    assert "sendChatAction" in methods


async def test_interrupted_stream_offers_retry_and_start_over(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    from tests.support.scripted import Broken

    token = new_token()
    user = TelegramUser(telegram_emulator, token, 5004)
    good = "I'm Sommelier, your wine guide.\n---\n" + json.dumps(
        {"response_type": "informational", "wines": [], "closing": "", "guard": None}
    )
    model = ScriptedModel([Broken(answer(good), 10), Broken(answer(good[10:]), 4), answer(good)])
    async with running_bot(
        sqlite_app,
        model,
        telegram_emulator,
        token,
        settings={"output_protocol": "delimited", "stream_retry_delay": 0.01},
        draft_interval=0.02,
    ):
        await user.say("who are you?")
        (notice,) = await user.wait_for(1)
        retry, new = (sign(token, user.chat_id, data) for data in ("r:retry", "r:new"))
        assert buttons(notice) == [("🔁 Retry", retry), ("🆕 Start over", new)]
        await user.press(retry)
        messages = await user.wait_for(2)
    assert messages[1]["text"] == "I'm Sommelier, your wine guide."
    assert model.requests[-1]["messages"][-1]["content"] == "who are you?"  # the same question


async def test_an_undelivered_reply_is_sent_again_in_the_background(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 6001)
    model = ScriptedModel([tools(STEAK), answer(reply(["sm-059"], intro="Intro.", closing="End?"))])
    async with running_bot(sqlite_app, model, telegram_emulator, token, redelivery_delay=0.2):
        # The intro goes out, then 6 dropped connections: more than one delivery's retries.
        await fail(telegram_emulator, token, "sendMessage", 6, after=1)
        await user.say("a red under 20 euros for steak")
        await until(lambda: _parts_sent(sqlite_app, 3), timeout=20)
        messages = await user.bot_messages()
    # Nothing lost, nothing twice, and no redelivery by Telegram was needed.
    assert messages[0]["text"] == INTRO and len(messages) == 3
    assert "Catena Malbec" in messages[1]["text"] and messages[2]["text"] == CLOSING
    (row,) = await inbound_rows(sqlite_app)
    assert row.parts_sent == 3 and len(model.requests) == 2


async def test_a_reply_past_its_deadline_gets_one_notice_with_retry(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    user = TelegramUser(telegram_emulator, token, 6002)
    model = ScriptedModel([answer(info("Hello, I'm Sommelier."))])
    clock = FakeClock()  # the backoff on a clock of the test's: 1, 2 s, then past 5 s
    options = {
        "redelivery_delay": 1,
        "delivery_deadline": 5,
        "clock": clock.now,
        "sleep": clock.sleep,
    }
    async with running_bot(sqlite_app, model, telegram_emulator, token, **options):
        # Down for the first send and the three tries within the deadline.
        await fail(telegram_emulator, token, "sendMessage", 4)
        await user.say("who are you?")
        (notice,) = await user.wait_for(1, timeout=30)
    assert notice["text"] == "I couldn't get my whole answer to you. Shall I try again?"
    assert shown(notice, token) == [("🔁 Retry", "r:retry")]
    (row,) = await inbound_rows(sqlite_app)
    assert row.status == "undelivered" and row.parts_sent == 0


async def test_a_busy_chat_does_not_hold_up_other_chats(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    busy, other = (
        TelegramUser(telegram_emulator, token, 6003),
        TelegramUser(telegram_emulator, token, 6004, name="Bo"),
    )

    release = asyncio.Event()

    class Slow(ScriptedModel):
        async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
            text = request.messages[-1]["content"]
            if text.startswith("busy"):
                await release.wait()
            return answer(info(f"re: {text}"))

    settings = {"telegram_max_concurrent_updates": 2, "llm_concurrency": 4}  # as above
    async with running_bot(sqlite_app, Slow([]), telegram_emulator, token, settings=settings):
        for i in range(3):
            await busy.say(f"busy {i}")
        await until(lambda: all_fetched(telegram_emulator, token))
        await other.say("quick one")
        (quick,) = await other.wait_for(1, timeout=10)
        first_busy = await busy.bot_messages()
        release.set()
        await busy.wait_for(3, timeout=10)
    # The busy chat's waiting updates hold no slot: the other chat is answered at once, before
    # the busy chat's first (slow) reply.
    assert quick["text"] == "re: quick one" and first_busy == []


async def test_a_private_chat_and_a_group_keep_separate_conversations(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    private = TelegramUser(telegram_emulator, token, 6005)
    group = TelegramUser(telegram_emulator, token, 6005)
    group.chat_type, group.chat_id = "group", -100600
    model = ScriptedModel([answer(info("Hi there.")), answer(info("Hello group."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await private.say("hi")
        await private.wait_for(1)
        await group.say("@SommelierTestBot hello all")
        await group.wait_for(1)
    # The group's turn did not see the private chat's history.
    assert [m["role"] for m in model.requests[1]["messages"]] == ["system", "system", "user"]
    async with sqlite_app.sessions() as session:
        from sommelier.db.models import Conversation

        chats = (await session.scalars(select(Conversation.chat_id))).all()
    assert sorted(chats) == [-100600, 6005]


async def test_thumbs_on_a_card_are_stored_once_and_profile_commands_work(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    from sommelier.db.models import Feedback

    token = new_token()
    user = TelegramUser(telegram_emulator, token, 1020)
    model = ScriptedModel(
        [tools(STEAK), answer(reply(["sm-059"], intro="One red.", closing="More?"))]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await user.command("/profile")
        (nothing,) = await user.wait_for(1)
        await user.say("I don't drink white wine. A red under 20 euros for steak?")
        _, card, _ = (await user.wait_for(4))[1:]
        up, down = [data for _, data in buttons(card)]
        assert len(down.encode()) <= 64
        await user.press(up)
        await user.press(down)  # changes the stored value, adds no row
        await user.command("/profile")
        profile = (await user.wait_for(5))[-1]
        await user.command("/forget")
        await user.command("/profile")
        forgotten, after = (await user.wait_for(7))[-2:]
        answered = [
            c for c in await calls(telegram_emulator, token) if c["method"] == "answerCallbackQuery"
        ]
    assert "don't remember anything" in nothing["text"]
    async with sqlite_app.sessions() as session:
        rows = (await session.scalars(select(Feedback))).all()
    assert [(r.card, r.wine_id, r.value) for r in rows] == [(1, "sm-059", -1)]
    assert "Styles you'd rather avoid: white" in profile["text"]
    assert "Wines you gave a 👎: sm-059" in profile["text"]
    assert "forgotten" in forgotten["text"] and "don't remember anything" in after["text"]
    assert len(answered) == 2  # each press gets its toast


async def test_twenty_chats_through_two_hundred_dropped_sends_lose_and_reorder_nothing(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    users = [TelegramUser(telegram_emulator, token, 7000 + n) for n in range(20)]

    class Echo(ScriptedModel):
        async def complete(self, request, on_delta=None):  # type: ignore[no-untyped-def]
            return answer(info(f"re: {request.messages[-1]['content']}"))

    clock = FakeClock()  # the couriers' backoff passes at once; the order is what is tested
    options = {"clock": clock.now, "sleep": clock.sleep, "delivery_deadline": 10**9}
    settings = {"llm_concurrency": 8, "telegram_rate_limit_per_minute": 100}
    async with running_bot(
        sqlite_app, Echo([]), telegram_emulator, token, settings=settings, **options
    ):
        await fail(telegram_emulator, token, "sendMessage", 200, after=10)
        for n in range(5):
            for user in users:
                await user.say(f"{user.user_id} #{n}")
        answered = [await user.wait_for(5, timeout=120) for user in users]
        dropped = [
            c for c in await calls(telegram_emulator, token) if c["method"].endswith(":dropped")
        ]
    assert len(dropped) == 200
    for user, messages in zip(users, answered, strict=True):
        assert [m["text"] for m in messages] == [f"re: {user.user_id} #{n}" for n in range(5)]
