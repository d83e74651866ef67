"""Comparing the wines of a reply (Bot API 10.1 rich messages) against the emulator: the
Compare button sends a table of catalog facts with no model call; where rich messages are
refused, the same facts come as cards, and nothing is lost."""

from __future__ import annotations

import json

from sommelier.bot.compare import table_html
from sommelier.chat.service import Card
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.telegram import TelegramUser, calls, new_token, running_bot, shown
from tests.support.waiting import until

REDS = ("search_wines", {"type": "red", "max_price": 20})


async def _compare(emulator, token: str, user: TelegramUser) -> None:  # type: ignore[no-untyped-def]
    """Ask for two reds, then press Compare under the reply."""
    await user.say("two reds under 20 euros")
    closing = (await user.wait_for(4))[-1]
    (data,) = [d for text, d in shown(closing, token) if text == "⚖️ Compare"]
    assert data is not None and data.startswith("c:")  # signed for this chat
    markup = closing["reply_markup"]
    markup = json.loads(markup) if isinstance(markup, str) else markup
    buttons = [b for row in markup["inline_keyboard"] for b in row]
    signed = next(b["callback_data"] for b in buttons if b["text"] == "⚖️ Compare")
    await user.press(signed)


def _model() -> ScriptedModel:
    return ScriptedModel([tools(REDS), answer(reply(["sm-059", "sm-006"], intro="Two reds."))])


async def _rich(emulator, token: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [c["body"] for c in await calls(emulator, token) if c["method"] == "sendRichMessage"]


async def test_compare_sends_the_wines_side_by_side_as_a_table(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1301)
    model = _model()
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await _compare(telegram_emulator, token, ana)
        await until(lambda: _has_rich(telegram_emulator, token))
    (sent,) = await _rich(telegram_emulator, token)
    message = sent["rich_message"]
    html = (json.loads(message) if isinstance(message, str) else message)["html"]
    assert html.startswith("<table><tr><th>🍷</th>") and html.count("<tr>") == 3
    assert "Catena Malbec" in html and "€17.00" in html
    assert len(model.requests) == 2  # the recommendation's calls; the comparison needs none


async def test_a_chat_that_refuses_rich_messages_gets_the_comparison_as_cards(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 1302)
    await telegram_emulator.post("/control/no_rich", {"token": token, "chat_id": ana.chat_id})
    async with running_bot(sqlite_app, _model(), telegram_emulator, token):
        await _compare(telegram_emulator, token, ana)
        messages = await ana.wait_for(6)
    cards = [m["text"] for m in messages[4:]]
    assert cards[0].startswith("🍷 <b>1. Catena Malbec</b>") and cards[1].startswith("🍷 <b>2.")
    assert "<table>" not in "".join(cards)  # never raw table markup


def test_a_table_escapes_what_the_catalog_says() -> None:
    card = Card(
        wine_id="x", name="Bad <b>wine</b> & co", producer="P", place="Here", grapes=["G"],
        style="red", price="€1.00", rating=None, rating_count=0, why="",
    )  # fmt: skip
    html = table_html([card, card], "en")
    assert "Bad &lt;b&gt;wine&lt;/b&gt; &amp; co" in html and "<b>" not in html


async def _has_rich(emulator, token: str) -> bool:  # type: ignore[no-untyped-def]
    return bool(await _rich(emulator, token))
