"""Button data signed for one chat by one bot (bot/signing.py)."""

from __future__ import annotations

import pytest

from sommelier.bot.signing import LIMIT, ROOM, sign, verified

TOKEN, OTHER_TOKEN = "123:abc", "456:def"


def test_data_signed_for_a_chat_comes_back_only_from_that_chat_and_that_bot() -> None:
    signed = sign(TOKEN, 42, "v:7:1:1")
    assert verified(TOKEN, 42, signed) == "v:7:1:1"
    assert verified(TOKEN, 43, signed) is None  # copied into another chat
    assert verified(OTHER_TOKEN, 42, signed) is None  # made by another bot


@pytest.mark.parametrize(
    "pressed", ["v:7:1:1", "v:7:1:1~", "v:8:1:1~{tag}", "~{tag}", "", None, "v:7:1:0~{tag}"]
)
def test_unsigned_or_altered_data_is_refused(pressed: str | None) -> None:
    tag = sign(TOKEN, 42, "v:7:1:1").rpartition("~")[2]
    assert verified(TOKEN, 42, pressed.format(tag=tag) if pressed else pressed) is None


def test_the_longest_data_fits_telegrams_limit_once_signed() -> None:
    assert len(sign(TOKEN, -1001234567890, "x" * ROOM).encode()) == LIMIT
    with pytest.raises(ValueError, match="64 bytes"):
        sign(TOKEN, 42, "x" * (ROOM + 1))
