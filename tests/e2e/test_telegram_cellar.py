"""The cellar in Telegram against the Bot API emulator: a CellarTracker export sent as a file
is added and /cellar lists it by readiness; a bad file adds nothing and names its rows; a
group's cellar is the group's, not a member's."""

from pathlib import Path

from tests.e2e.test_telegram_photos_inline import buttons
from tests.support.scripted import ScriptedModel
from tests.support.telegram import TelegramUser, new_token, running_bot

DATA = Path(__file__).resolve().parents[1] / "data"
HEADINGS = ("At their peak", "Ready to drink", "Too young", "Past their peak")


async def test_a_cellar_file_is_added_and_listed_by_readiness(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7301)
    export = (DATA / "cellartracker_my_cellar.csv").read_bytes()
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.command("/cellar")
        (empty,) = await ana.wait_for(1)
        await ana.document(export, "My Cellar.csv", "text/csv")
        added = (await ana.wait_for(2))[1]
        await ana.command("/cellar")
        listed = (await ana.wait_for(3))[2]
    assert empty["text"].startswith("The cellar is empty.")
    assert added["text"] == (
        "Added 6 bottles to the cellar: 2 of 3 wines are in the catalog, the others are kept "
        "as you named them."
    )
    text = listed["text"]
    assert text.startswith("Bottles in the cellar: 6")
    assert "• 2 × Louis Jadot Bourgogne Pinot Noir 2020 · Cellar / A3" in text
    assert "• 3 × Domaine Tempier Bandol Rouge 2016 · Cellar / B1" in text
    shown = [h for h in HEADINGS if h in text]
    assert shown and shown == sorted(shown, key=HEADINGS.index)


async def test_a_bad_file_adds_nothing_and_says_which_rows(sqlite_app, telegram_emulator) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7302)
    ana.language = "de"
    bad = b"name,quantity\nCatena Malbec,6\nBarolo,zwei\n"
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.document(bad, "keller.csv", "text/csv")
        await ana.command("/cellar")
        refused, listed = await ana.wait_for(2)
    assert refused["text"].startswith("Aus dieser Datei wurde nichts hinzugefügt:")
    assert "keller.csv:3: quantity: 'zwei' is not a number of bottles" in refused["text"]
    assert listed["text"].startswith("Der Keller ist leer.")


async def test_a_groups_cellar_is_shared_by_its_members_and_apart_from_theirs(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7303)
    bob = TelegramUser(telegram_emulator, token, 7304, name="Bob")
    for member in (ana, bob):
        member.chat_type, member.chat_id = "group", -7300
    export = (DATA / "vivino_cellar.csv").read_bytes()
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.document(export, "cellar.csv", "text/csv", caption="@SommelierTestBot")
        await ana.wait_for(1)
        await bob.command("/cellar")
        group_list = (await bob.wait_for(2))[1]
        bob.chat_type, bob.chat_id = "private", 7304
        await bob.command("/cellar")
        (own,) = await bob.wait_for(1)
    assert group_list["text"].startswith("Bottles in the cellar: 5")
    assert "4 × Catena Malbec 2021" in group_list["text"]
    assert own["text"].startswith("The cellar is empty.")


async def test_forget_offers_to_delete_the_cellar_and_does_only_when_pressed(
    sqlite_app, telegram_emulator
) -> None:  # type: ignore[no-untyped-def]
    token = new_token()
    ana = TelegramUser(telegram_emulator, token, 7305)
    export = (DATA / "vivino_cellar.csv").read_bytes()
    async with running_bot(sqlite_app, ScriptedModel([]), telegram_emulator, token):
        await ana.document(export, "cellar.csv", "text/csv")
        await ana.wait_for(1)
        await ana.command("/forget")
        forgotten, offer = (await ana.wait_for(3))[1:3]
        (keep, delete) = sorted(buttons(offer), key=lambda b: b[0] != "Keep it")
        await ana.press(keep[1])
        kept = (await ana.wait_for(4))[3]
        await ana.command("/cellar")
        still = (await ana.wait_for(5))[4]
        await ana.press(delete[1])
        deleted = (await ana.wait_for(6))[5]
        await ana.command("/cellar")
        empty = (await ana.wait_for(7))[6]
    assert forgotten["text"].startswith("Done: I've forgotten everything about your taste.")
    assert offer["text"] == "Your cellar still holds 5 bottles. Delete it too?"
    assert (kept["text"], deleted["text"]) == (
        "Your cellar is kept.",
        "Done: your cellar is deleted.",
    )
    assert still["text"].startswith("Bottles in the cellar: 5")
    assert empty["text"].startswith("The cellar is empty.")
