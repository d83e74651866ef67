"""Rendering a turn for Telegram: HTML parse mode, every piece of text escaped, no message over
4096 characters (split at paragraphs, then sentences, then words), plain-text twins for the
fallback when Telegram rejects the formatting. Pure functions."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from sommelier.agent.text import sentences
from sommelier.chat.labels import rating_label
from sommelier.chat.service import Card, TurnReply
from sommelier.db.turns import MAX_ROW_ID, InboundStatus
from sommelier.i18n.translations import N_, plural, translator

MESSAGE_LIMIT = 4096
RETRY = N_("🔁 Retry")
START_OVER = N_("🆕 Start over")
CHEAPER = N_("💶 Cheaper")
DIFFERENT = N_("🔄 Something different")
MORE = N_("ℹ️ More about {index}")
COMPARE = N_("⚖️ Compare")
OPENED = N_("🍾 Opened")  # under a card of a wine in the cellar (bot/opened.py)
# Under the cards of bottles they said they have (cellar/adding.py): `cm:<inbound>:<card>`, card
# 0 being the wine as they named it (bot/cellar.py `add_said`).
ADD_AS_NAMED = N_("✍️ Add it as I named it")
ADD_SAID = "cm:"


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    data: str


@dataclass(slots=True)
class Part:
    """One Telegram message: HTML text, its plain twin, and optional inline buttons; in a
    group, the message it quotes (`reply_to`) and the forum topic it goes to."""

    html: str
    plain: str
    buttons: list[list[Button]] = field(default_factory=list)
    reply_to: int | None = None
    topic: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "html": self.html,
            "plain": self.plain,
            "buttons": [[[b.text, b.data] for b in row] for row in self.buttons],
            "reply_to": self.reply_to,
            "topic": self.topic,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Part:
        buttons = [[Button(t, d) for t, d in row] for row in data.get("buttons", [])]
        return cls(data["html"], data["plain"], buttons, data.get("reply_to"), data.get("topic"))


def placed(parts: list[Part], reply_to: int | None, topic: int | None) -> list[Part]:
    """Parts for a group: all in the message's topic, the first quoting the message."""
    for part in parts:
        part.topic = topic
    if parts:
        parts[0].reply_to = reply_to
    return parts


def escape(text: str) -> str:
    return html.escape(text, quote=False)


def _pieces(text: str, limit: int) -> list[str]:
    """Split raw text so that each escaped piece fits `limit`: paragraphs, sentences, words."""
    if len(escape(text)) <= limit:
        return [text]
    for separator in ("\n\n", None, " "):
        units = text.split(separator) if separator else sentences(text)
        if len(units) > 1:
            joiner = separator if separator is not None else " "
            return _pack(units, joiner, limit)
    # One unbreakable word: cut by characters.
    step = max(1, limit // 6)
    return [text[i : i + step] for i in range(0, len(text), step)]


def _pack(units: list[str], joiner: str, limit: int) -> list[str]:
    pieces: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current}{joiner}{unit}" if current else unit
        if len(escape(candidate)) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        if len(escape(unit)) <= limit:
            current = unit
        else:
            sub = _pieces(unit, limit)
            pieces.extend(sub[:-1])
            current = sub[-1]
    if current:
        pieces.append(current)
    return pieces


def text_parts(text: str, *, style: str | None = None, limit: int = MESSAGE_LIMIT) -> list[Part]:
    """Plain text as one or more parts, optionally wrapped in <b> or <i>, nothing cut."""
    wrapper = len(f"<{style}></{style}>") if style else 0
    parts = []
    for piece in _pieces(text, limit - wrapper):
        body = escape(piece)
        parts.append(Part(f"<{style}>{body}</{style}>" if style else body, piece))
    return parts


def _rating(card: Card, language: str | None) -> str:
    return rating_label(card.rating, card.rating_count, language)


def card_lines(index: int | None, card: Card, language: str | None = None) -> tuple[str, list[str]]:
    """A card's title ("2. Name", or the name alone without an index) and its fact lines."""
    facts = [
        card.producer or "",
        card.place or "",
        ", ".join(card.grapes),
        " · ".join(
            x
            for x in (
                card.style,
                card.price or "",
                rating_label(card.rating, card.rating_count, language),
            )
            if x
        ),
    ]
    facts.append(card.cellar)  # "In your cellar: 2 · rack B · Ready to drink"
    title = card.name if index is None else f"{index}. {card.name}"
    return title, [f for f in facts if f]


def card_parts(
    index: int | None, card: Card, limit: int = MESSAGE_LIMIT, language: str | None = None
) -> list[Part]:
    title, facts = card_lines(index, card, language)
    head_html = f"🍷 <b>{escape(title)}</b>\n" + "\n".join(escape(f) for f in facts)
    head_plain = f"🍷 {title}\n" + "\n".join(facts)
    if not card.why.strip():  # a why left out (cut, or false): the facts speak
        return (
            text_parts(head_plain, limit=limit)
            if len(head_html) > limit
            else [Part(head_html, head_plain)]
        )
    why_parts = text_parts(card.why, style="i", limit=limit - len(head_html) - 2)
    first = why_parts[0]
    parts = [Part(f"{head_html}\n\n{first.html}", f"{head_plain}\n\n{first.plain}")]
    if len(parts[0].html) > limit:  # a catalog row with absurdly long facts
        parts = text_parts(parts[0].plain, limit=limit)
    return parts + why_parts[1:]


def follow_up_buttons(reply: TurnReply) -> list[list[Button]]:
    """Callback data stays far under Telegram's 64 bytes whatever the wine ids: a card is named
    by the update its reply answered and its place in that reply; the reply's language comes
    along, so the message a button sends is in it."""
    t, language = translator(reply.language), reply.language
    rows = [
        [
            Button(t(CHEAPER), f"f:cheaper:{language}"),
            Button(t(DIFFERENT), f"f:different:{language}"),
        ]
    ]
    if reply.cards and reply.inbound_id is not None:
        rows.append(
            [
                Button(t(MORE).format(index=i), f"m:{reply.inbound_id}:{i}:{language}")
                for i in range(1, len(reply.cards) + 1)
            ]
        )
    if len(reply.cards) > 1 and reply.inbound_id is not None:
        rows.append([Button(t(COMPARE), f"c:{reply.inbound_id}:{language}")])
    return rows


def render_reply(reply: TurnReply, limit: int = MESSAGE_LIMIT) -> list[Part]:
    """A turn as Telegram messages: intro, one card per wine, closing with the buttons."""
    t = translator(reply.language)
    if not reply.ok:
        notice = text_parts(reply.text, limit=limit)
        if reply.status == InboundStatus.interrupted:
            notice[-1].buttons = [[Button(t(RETRY), "r:retry"), Button(t(START_OVER), "r:new")]]
        return notice
    parts: list[Part] = []
    if reply.notice:
        parts += text_parts(reply.notice, style="i", limit=limit)
    if reply.intro.strip():
        parts += text_parts(reply.intro.strip(), limit=limit)
    if reply.adding is not None:
        return adding_parts(reply, parts, limit)
    for index, card in enumerate(reply.cards, 1):
        parts += card_parts(index, card, limit, reply.language)
        if reply.message_id is not None:
            parts[-1].buttons = [vote_buttons(reply.message_id, index)]
        if card.cellar and reply.inbound_id is not None:  # a bottle they own: "🍾 Opened"
            parts[-1].buttons.append([Button(t(OPENED), f"o:{reply.inbound_id}:{index}")])
    if reply.closing.strip():
        parts += text_parts(reply.closing.strip(), limit=limit)
    if not parts:
        parts = text_parts(reply.text, limit=limit)
    if reply.reply is not None and str(reply.reply.response_type) in (
        "recommendation",
        "informational",
    ):
        parts[-1].buttons = follow_up_buttons(reply)
        if reply.message_id is not None:
            parts[-1].buttons.append(vote_buttons(reply.message_id, 0))
    return parts


def adding_parts(reply: TurnReply, parts: list[Part], limit: int = MESSAGE_LIMIT) -> list[Part]:
    """The wines that bottles they have may be, each with a button that adds them; unless the
    match is sure, one more that keeps the wine as they named it. No other buttons: nothing
    here is a recommendation to rate or refine."""
    assert reply.adding is not None
    parts = list(parts)  # the intro's
    bottles = int(reply.adding.get("bottles") or 1)
    add = plural(reply.language, "➕ Add {bottles} bottle", "➕ Add {bottles} bottles", bottles)
    add = add.format(bottles=bottles)
    for index, card in enumerate(reply.cards, 1):
        parts += card_parts(index, card, limit, reply.language)
        if reply.inbound_id is not None:
            parts[-1].buttons = [[Button(add, f"{ADD_SAID}{reply.inbound_id}:{index}")]]
    if not reply.adding.get("sure") and reply.inbound_id is not None:
        named = Button(translator(reply.language)(ADD_AS_NAMED), f"{ADD_SAID}{reply.inbound_id}:0")
        if not parts:
            parts = text_parts(reply.text, limit=limit)
        parts[-1].buttons.append([named])
    return parts


def vote_buttons(message_id: int, card: int) -> list[Button]:
    """👍/👎 on a reply (card 0) or one of its cards: `v:<reply id>:<card>:<1|0>`, at most
    2 + 19 + 1 + 2 + 2 bytes, far under Telegram's 64."""
    return [Button("👍", f"v:{message_id}:{card}:1"), Button("👎", f"v:{message_id}:{card}:0")]


def parse_vote(data: str) -> tuple[int, int, int] | None:
    """(reply id, card, +1 or -1) from a vote button's data; None for anything else."""
    parts = data.split(":")
    if len(parts) != 4 or parts[0] != "v" or not all(p.isdigit() for p in parts[1:]):
        return None
    if parts[3] not in ("0", "1") or len(parts[1]) > 19 or len(parts[2]) > 2:
        return None
    if int(parts[1]) >= MAX_ROW_ID:  # no row has it: never asked of the database
        return None
    return int(parts[1]), int(parts[2]), 1 if parts[3] == "1" else -1
