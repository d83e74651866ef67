"""Telegram rendering: escaping, splitting, plain twins, buttons (pure)."""

from sommelier.bot.render import MESSAGE_LIMIT, Part, render_reply, text_parts
from sommelier.bot.signing import ROOM
from sommelier.chat.answer import Reply
from sommelier.chat.service import Card, TurnReply


def card(**overrides) -> Card:  # type: ignore[no-untyped-def]
    values = dict(
        wine_id="sm-1",
        name="Château <Test> & Co",
        producer="P",
        place="Rioja, Spain",
        grapes=["Tempranillo"],
        style="red, dry",
        price="19.00 EUR",
        rating=4.2,
        rating_count=1200,
        why="Because <b>it</b> fits.",
    )
    return Card(**(values | overrides))


def turn(cards, intro="Hi & welcome", closing="More?", kind="recommendation") -> TurnReply:  # type: ignore[no-untyped-def]
    reply = Reply.model_validate(
        {
            "response_type": kind,
            "intro": intro,
            "closing": closing,
            "guard": None,
            "wines": [{"wine_id": c.wine_id, "why": c.why} for c in cards],
        }
    )
    return TurnReply(
        "ok", "text", intro=intro, closing=closing, cards=cards, reply=reply, inbound_id=4242
    )


def test_every_piece_of_text_is_escaped() -> None:
    parts = render_reply(turn([card()]))
    assert parts[0].html == "Hi &amp; welcome"
    assert "<b>1. Château &lt;Test&gt; &amp; Co</b>" in parts[1].html
    assert "<i>Because &lt;b&gt;it&lt;/b&gt; fits.</i>" in parts[1].html
    assert "Château <Test> & Co" in parts[1].plain  # the plain twin is unescaped
    assert "★ 4.2 (1,200 ratings)" in parts[1].html and "19.00 EUR" in parts[1].html


def test_price_is_left_out_when_unknown() -> None:
    html = render_reply(turn([card(price=None)]))[1].html
    assert "EUR" not in html and "red, dry · ★ 4.2" in html


def test_a_wine_the_person_owns_says_how_many_and_where_under_its_facts() -> None:
    owned = card(cellar="In your cellar: 2 · rack <B> · Ready to drink")
    part = render_reply(turn([owned]))[1]
    assert (
        "red, dry · 19.00 EUR · ★ 4.2 (1,200 ratings)\nIn your cellar: 2 · rack &lt;B&gt;"
        in part.html
    )
    assert "In your cellar" not in render_reply(turn([card()]))[1].plain


def test_buttons_under_the_last_message() -> None:
    parts = render_reply(turn([card(), card(wine_id="sm-2")]))
    assert all(not p.buttons for p in parts[:-1])
    data = [b.data for row in parts[-1].buttons for b in row]
    assert data == ["f:cheaper:en", "f:different:en", "m:4242:1:en", "m:4242:2:en", "c:4242:en"]
    # One wine has nothing to be compared with.
    single = [b.data for row in render_reply(turn([card()]))[-1].buttons for b in row]
    assert not any(d.startswith("c:") for d in single)


def test_callback_data_fits_telegrams_64_bytes_whatever_the_wine_ids() -> None:
    long_id = "x" * 64  # the longest id the catalog allows
    parts = render_reply(turn([card(wine_id=long_id), card(wine_id=long_id + "2")]))
    # Within 64 bytes once signed (bot/signing.py adds its tag).
    assert all(len(b.data.encode()) <= ROOM for row in parts[-1].buttons for b in row)


def test_clarifications_get_no_follow_up_buttons() -> None:
    parts = render_reply(turn([], intro="What budget?", closing="", kind="clarification"))
    assert [p.html for p in parts] == ["What budget?"] and not parts[0].buttons


def test_long_text_splits_at_paragraphs_then_sentences_and_loses_nothing() -> None:
    paragraph = "Sentence about wine number one. " * 60  # ~1900 characters
    text = "\n\n".join([paragraph.strip()] * 5)
    parts = text_parts(text)
    assert all(len(p.html) <= MESSAGE_LIMIT for p in parts) and len(parts) >= 3
    assert "\n\n".join(p.plain for p in parts) == text  # split at paragraph breaks only
    one_paragraph = "Short sentence & more. " * 400  # 9200 characters, no breaks
    pieces = text_parts(one_paragraph.strip())
    assert all(len(p.html) <= MESSAGE_LIMIT for p in pieces)
    assert all(p.plain.endswith(".") for p in pieces)  # cut at sentence ends
    assert " ".join(p.plain for p in pieces) == one_paragraph.strip()


def test_escaping_expansion_is_counted() -> None:
    parts = text_parts("&" * 5000)  # each & becomes &amp; (5 characters)
    assert all(len(p.html) <= MESSAGE_LIMIT for p in parts)
    assert "".join(p.plain for p in parts) == "&" * 5000


def test_a_huge_why_continues_in_its_own_messages() -> None:
    why = "This wine is remarkable. " * 400
    parts = render_reply(turn([card(why=why)], intro="", closing=""))
    assert len(parts) > 1 and all(len(p.html) <= MESSAGE_LIMIT for p in parts)
    assert parts[0].html.startswith("🍷 <b>1.")


def test_failed_turns_render_their_friendly_text() -> None:
    parts = render_reply(TurnReply("error", "Please try again <soon>."))
    assert parts == [Part("Please try again &lt;soon&gt;.", "Please try again <soon>.")]


def test_parts_survive_the_ledger_round_trip() -> None:
    parts = render_reply(turn([card()]))
    assert [Part.from_json(p.to_json()) for p in parts] == parts


def test_a_reply_in_german_has_german_buttons_labels_and_notice() -> None:
    reply = turn([card(), card(wine_id="sm-2")])
    reply.language = "de"
    reply.notice = "Keine Weine aus Georgien im Katalog. Hier sind die nächstbesten Treffer."
    parts = render_reply(reply)
    assert parts[0].html == f"<i>{reply.notice}</i>"
    assert "★ 4,2 (1.200 Bewertungen)" in parts[2].html
    labels = [b.text for row in parts[-1].buttons for b in row]
    assert labels[:4] == ["💶 Günstiger", "🔄 Etwas anderes", "ℹ️ Mehr zu 1", "ℹ️ Mehr zu 2"]
    assert parts[-1].buttons[0][0].data == "f:cheaper:de"


def test_a_guest_answer_is_one_message_of_whole_cards_that_fits() -> None:
    from sommelier.bot.guest import one_message

    long_why = "It fits the dish, and more. " * 60  # ~1,700 characters a card
    reply = turn([card(wine_id=f"sm-{n}", why=long_why) for n in range(1, 6)])
    text = one_message(reply)
    assert len(text) <= MESSAGE_LIMIT
    assert text.startswith("Hi &amp; welcome") and text.count("🍷 <b>") == 2
    assert text.endswith("</i>")  # the last card whole, its why closed; no buttons' words
