"""The colour and sweetness a message names in a language without a word list
(catalog/colours.py): a wine's, not those of something else the message names."""

import pytest

from sommelier.catalog.colours import colour_named, sweetness_named
from sommelier.catalog.lexicon import fold


@pytest.mark.parametrize(
    ("said", "colour"),
    [
        ("Poproszę białe wino do ryby", "white"),
        ("Coś białego do 50 zł?", "white"),
        ("Szukam białych win z Niemiec", "white"),
        ("Mikä punaviini sopii poronkäristykseen?", "red"),
        # unseen50: "z białą kiełbasą" (with white sausage) was read as a white wine, and two
        # Rieslings came back "as you asked: white".
        ("Jakie wino pasuje do żurku z białą kiełbasą?", None),
    ],
)
def test_a_colour_named_is_a_wines_colour(said: str, colour: str | None) -> None:
    assert colour_named(fold(said)) == colour


@pytest.mark.parametrize(
    ("said", "sweetness"),
    [
        ("อยากได้ไวน์หวานสำหรับของหวาน", "sweet"),
        ("ขอไวน์แห้งสักขวด", "dry"),
        ("Szukam słodkiego wina do sernika", "sweet"),
        # unseen51: green curry is "sweet green curry"; a Moscato and an icewine came back
        # "sweet, as you asked".
        ("แกงเขียวหวานไก่ ควรดื่มไวน์อะไร", None),
    ],
)
def test_a_sweetness_named_is_a_wines(said: str, sweetness: str | None) -> None:
    assert sweetness_named(fold(said)) == sweetness
