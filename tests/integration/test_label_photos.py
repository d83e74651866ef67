"""Photos of labels and wine lists, read by the real OCR model (the vision extra) and matched to
the starter catalog: labels the tests draw themselves, turned and blurred a little."""

from __future__ import annotations

import pytest

from sommelier.vision.ocr import UnreadableImage
from sommelier.vision.photos import PhotoReader
from tests.support.label_images import render_label, render_list

LABELS = [
    (["Château Lynch-Bages", "Pauillac", "2018"], "sm-002"),
    (["Marqués de Riscal", "Reserva", "Rioja 2018"], "sm-032"),
    (["Cloudy Bay", "Sauvignon Blanc", "Marlborough 2023"], "sm-055"),
]


@pytest.mark.parametrize(("lines", "wine_id"), LABELS)
async def test_a_label_photo_is_its_catalog_wine(sqlite_app, lines, wine_id) -> None:  # type: ignore[no-untyped-def]
    found = await PhotoReader(sqlite_app.sessions).recognise(render_label(lines, seed=len(lines)))
    assert found.sure and found.matches[0].wine_id == wine_id, (found.text, found.matches)


async def test_a_label_the_catalog_lacks_is_read_but_not_matched(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    photo = render_label(["Bodega Luna Roja", "Rioja Reserva", "2019"], seed=3)
    found = await PhotoReader(sqlite_app.sessions).recognise(photo)
    assert "luna" in " ".join(found.text).casefold() and not found.sure


async def test_a_wine_list_photo_is_the_wines_on_it(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    photo = render_list(
        [("Kanonkop Pinotage 2019", "64"), ("Château Musar 2016", "95"), ("House red", "7")]
    )
    found = await PhotoReader(sqlite_app.sessions).recognise(photo)
    assert found.is_list and {m.wine_id for m in found.listed} == {"sm-062", "sm-068"}


async def test_bytes_that_are_no_image_are_said_so(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnreadableImage):
        await PhotoReader(sqlite_app.sessions).recognise(b"GIF89a, or so it says")


def _png_of(width: int, height: int) -> bytes:
    """A PNG of one colour: a few kilobytes on the wire, width × height pixels decoded."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (width, height)).save(buffer, "PNG", optimize=True)
    return buffer.getvalue()


async def test_a_pixel_bomb_is_refused_before_it_is_decoded(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    """144 megapixels in a small PNG: refused from its header (decoded, it cost 400 MB)."""
    bomb = _png_of(12_000, 12_000)
    assert len(bomb) < 200_000
    with pytest.raises(UnreadableImage, match="too large"):
        await PhotoReader(sqlite_app.sessions).recognise(bomb)


async def test_a_truncated_image_is_said_so(sqlite_app) -> None:  # type: ignore[no-untyped-def]
    from tests.support.label_images import render_label

    cut = render_label(["Château Musar"], seed=1)[:400]
    with pytest.raises(UnreadableImage, match="not an image"):
        await PhotoReader(sqlite_app.sessions).recognise(cut)


OFFLINE = """
import socket, sys

def refused(*args, **kwargs):
    raise OSError("the network is refused in this test")

socket.socket.connect = refused
socket.create_connection = refused
socket.getaddrinfo = refused

from sommelier.vision.ocr import read_lines

print("|".join(line.text for line in read_lines(open(sys.argv[1], "rb").read())))
"""


def test_a_label_is_read_with_the_network_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The OCR's models come from its wheel: a fresh process, whose every connection fails,
    loads them and reads a label (rapidocr would download a model it lacked, and fail here)."""
    import subprocess
    import sys

    photo = tmp_path / "label.png"
    photo.write_bytes(render_label(["Cloudy Bay", "Sauvignon Blanc", "Marlborough 2023"], seed=3))
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE, str(photo)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cloudy bay" in done.stdout.casefold(), done.stdout
