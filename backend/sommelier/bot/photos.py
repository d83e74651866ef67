"""A photo's answer (chat/photos.py) as Telegram messages: the lines above the cards, the
cards, and the buttons that ask about a wine ("lw:<id>", a turn "Tell me more about …")."""

from __future__ import annotations

from sommelier.bot.render import Button, Part, card_parts, text_parts
from sommelier.bot.signing import ROOM
from sommelier.chat.photos import ENABLE, PhotoAnswer, Seen
from sommelier.i18n.translations import N_, translator

PHOTOS_OFF = N_(
    "I can't read photos here yet: this server lacks the vision extra ({enable}). "
    "Meanwhile, tell me the wine's name in words. 🍷"
)
NOT_AN_IMAGE = N_("I couldn't open that image. Please send it again as a photo.")
UNREADABLE = N_("I couldn't read any text on that photo. A sharp, close shot of the label helps.")
SURE = N_("This looks like {name} ({percent}% match).")
NOT_SURE = N_("Not sure: is it one of these?")
NOT_KNOWN = N_("I read “{text}”, but I don't have that wine in my catalog. Similar wines:")
LISTED = N_("On this list I know these, best for you first:")
ABOUT = N_("ℹ️ More about it")
ADD = N_("➕ Add to my cellar")
ADD_DATA = "ca:"
QUOTED = 80  # characters of the text read that the reply quotes


def about_data(wine_id: str) -> str | None:
    """A button asking about a catalog wine: `lw:<id>`, when it fits Telegram's 64 bytes once
    signed (bot/signing.py)."""
    data = f"lw:{wine_id}"
    return data if len(data.encode()) <= ROOM else None


def render_photo(answer: PhotoAnswer, language: str) -> list[Part]:
    t = translator(language)
    if answer.seen == Seen.off:
        return text_parts(t(PHOTOS_OFF).format(enable=ENABLE))
    if answer.seen == Seen.unreadable:
        return text_parts(t(UNREADABLE))
    if answer.seen == Seen.not_an_image:
        return text_parts(t(NOT_AN_IMAGE))
    if answer.seen == Seen.choose:
        buttons = [
            [Button(f"{m.name} · {round(100 * m.confidence)}%", data)]
            for m in answer.candidates
            if (data := about_data(m.wine_id))
        ]
        return [Part(t(NOT_SURE), t(NOT_SURE), buttons)]
    if answer.seen == Seen.sure and answer.cards:
        percent = round(100 * (answer.confidence or 0))
        heading = t(SURE).format(name=answer.cards[0].name, percent=percent)
    elif answer.seen == Seen.listed:
        heading = t(LISTED)
    else:
        said = answer.read if len(answer.read) <= QUOTED else answer.read[: QUOTED - 1] + "…"
        heading = t(NOT_KNOWN).format(text=said)
    return text_parts(heading) + _cards(answer, t(ABOUT), language)


def _cards(answer: PhotoAnswer, about: str, language: str) -> list[Part]:
    parts: list[Part] = []
    alone = len(answer.cards) == 1
    for index, card in enumerate(answer.cards, 1):
        parts += card_parts(None if alone else index, card, language=language)
        if (data := about_data(card.wine_id)) is not None:
            parts[-1].buttons = [[Button(about if alone else f"ℹ️ {index}", data)]]
    keep = add_data(answer.cards[0].wine_id) if answer.seen == Seen.sure else None
    if keep is not None:  # the label of a bottle they hold in their hand: theirs to keep
        parts[-1].buttons.append([Button(translator(language)(ADD), keep)])
    return parts


def add_data(wine_id: str) -> str | None:
    """A button adding a bottle of a catalog wine to the chat's cellar (bot/cellar.py)."""
    data = f"{ADD_DATA}{wine_id}"
    return data if len(data.encode()) <= ROOM else None
