"""Photos, voice messages and inline mode against the Bot API emulator: a label's wine with
the real OCR model (and without the vision extra), "Why this wine?" deep links, inline
results from the catalog with no model call."""

import json
import logging

import pytest

from sommelier.agent.model import Completion, ModelRequest
from sommelier.vision.photos import PhotoReader
from tests.support.label_images import render_label
from tests.support.scripted import ScriptedModel, answer, reply, tools
from tests.support.telegram import TelegramUser, all_fetched, calls, new_token, running_bot
from tests.support.waiting import until


def info(text: str) -> dict:
    return reply([], "informational", intro=text, closing="")


def look_up_the_wine_asked_about(request: ModelRequest) -> Completion:
    """get_wine on the id in "Tell me more about … (wine id sm-012).", as a model would."""
    asked = str(request.messages[-1]["content"])
    return tools(("get_wine", {"ids": [asked.rsplit("wine id ", 1)[1].rstrip(").")]}))


def buttons(message: dict) -> list[tuple[str, str]]:
    markup = message.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return [(b["text"], b.get("callback_data", b.get("url"))) for row in markup.get("inline_keyboard", []) for b in row]  # fmt: skip


async def test_a_label_photo_gets_its_wine_card_and_a_button_to_ask_about_it(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7101)
    model = ScriptedModel(
        [tools(("get_wine", {"ids": ["sm-068"]})), answer(info("Musar ages for decades."))]
    )
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.photo(render_label(["Château Musar", "Bekaa Valley", "2016"], seed=2))
        sure, card = await ana.wait_for(2, timeout=60)
        about, add = buttons(card)
        await ana.press(about[1])
        answered = (await ana.wait_for(3))[2]
    assert sure["text"].startswith("This looks like Château Musar (") and "% match" in sure["text"]
    assert "Château Musar" in card["text"] and "Bekaa Valley" in card["text"]
    assert about[0] == "ℹ️ More about it" and add[0] == "➕ Add to my cellar"
    assert model.requests[0]["messages"][-1]["content"].startswith(
        "Tell me more about Château Musar"
    )
    assert answered["text"] == "Musar ages for decades."


async def test_without_the_vision_extra_a_photo_says_how_to_enable_it(
    sqlite_app, telegram_emulator, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(PhotoReader, "available", staticmethod(lambda: False))
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7102)
    ana.language = "de"
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.photo(render_label(["Château Musar"], seed=1))
        await ana.voice()
        photo, voice = await ana.wait_for(2)
    assert "pip install -e '.[vision]'" in photo["text"] and "Fotos" in photo["text"]
    assert "Sprachnachrichten" in voice["text"]


async def test_inline_mode_shows_catalog_wines_for_the_words_with_a_why_link(
    sqlite_app, telegram_emulator, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7103)
    model = ScriptedModel([look_up_the_wine_asked_about, answer(info("Bright cherry fruit."))])
    async with running_bot(sqlite_app, model, telegram_emulator, token):
        await ana.inline("red under 20 for pizza")
        await until(lambda: _answered_inline(telegram_emulator, token))
        (call,) = [
            c for c in await calls(telegram_emulator, token) if c["method"] == "answerInlineQuery"
        ]
        results = json.loads(call["body"]["results"])
        with caplog.at_level(logging.INFO, logger="sommelier.bot"):
            await ana.inline(results[0]["id"], update="chosen_inline_result")
            await until(lambda: all_fetched(telegram_emulator, token))
        link = results[0]["reply_markup"]["inline_keyboard"][0][0]["url"]
        await ana.command(f"/start {link.split('?start=')[1]}")
        (answered,) = await ana.wait_for(1)
    assert results and int(call["body"]["cache_time"]) > 0
    assert str(call["body"]["is_personal"]).lower() == "true"  # labels in Ana's language
    prices = [float(r["input_message_content"]["message_text"].split("€")[1].split()[0]) for r in results]  # fmt: skip
    assert max(prices) <= 20 and all(" red" in r["description"] for r in results)
    assert link.startswith("https://t.me/SommelierTestBot?start=why_")
    assert any(getattr(r, "event", "") == "inline_chosen" for r in caplog.records)
    assert model.requests[0]["messages"][-1]["content"].startswith("Tell me more about")
    assert answered["text"] == "Bright cherry fruit."


async def _answered_inline(emulator, token: str) -> bool:  # type: ignore[no-untyped-def]
    return any(c["method"] == "answerInlineQuery" for c in await calls(emulator, token))


async def test_photos_count_against_the_limit_and_a_broken_one_is_said_so(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    """Photos were unlimited (20 in 2 s all read) and a corrupt one ended in "Something went
    wrong": now three a minute here get read, the rest the "wait" notice, and a file that is no
    image its own message."""
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7103)
    broken = render_label(["Château Musar"], seed=3)[:300]
    async with running_bot(
        sqlite_app, ScriptedModel([]), telegram_emulator, token, rate_limit_per_minute=3
    ):
        await ana.photo(broken)
        for _ in range(4):
            await ana.photo(broken)
        said = [m["text"] for m in await ana.wait_for(5, timeout=60)]
    # The notices come at once; the photos are read in turn.
    assert said.count("I couldn't open that image. Please send it again as a photo.") == 3
    assert sum(s.startswith("You're writing faster than I can taste!") for s in said) == 2
    assert not any("Something went wrong" in s for s in said)
