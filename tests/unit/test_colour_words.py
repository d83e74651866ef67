"""The colour and sweetness a message names in a language without a word list
(catalog/colours.py): a wine's, not those of something else the message names."""

from collections.abc import Callable

import pytest

from sommelier.catalog.colours import colour_named, sweetness_named
from sommelier.catalog.lexicon import fold


@pytest.mark.parametrize(
    ("named", "said", "expected"),
    [
        (colour_named, "Poproszę białe wino do ryby", "white"),
        (colour_named, "Coś białego do 50 zł?", "white"),
        (colour_named, "Szukam białych win z Niemiec", "white"),
        (colour_named, "Mikä punaviini sopii poronkäristykseen?", "red"),
        # unseen50: "z białą kiełbasą" (with white sausage) was read as a white wine, and two
        # Rieslings came back "as you asked: white".
        (colour_named, "Jakie wino pasuje do żurku z białą kiełbasą?", None),
        (sweetness_named, "อยากได้ไวน์หวานสำหรับของหวาน", "sweet"),
        (sweetness_named, "ขอไวน์แห้งสักขวด", "dry"),
        (sweetness_named, "Szukam słodkiego wina do sernika", "sweet"),
        # unseen51: green curry is "sweet green curry"; a Moscato and an icewine came back
        # "sweet, as you asked".
        (sweetness_named, "แกงเขียวหวานไก่ ควรดื่มไวน์อะไร", None),
    ],
)
def test_a_colour_or_sweetness_named_is_a_wines(
    named: Callable[[str], str | None], said: str, expected: str | None
) -> None:
    assert named(fold(said)) == expected
