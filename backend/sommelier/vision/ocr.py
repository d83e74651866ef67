"""The text on a photo, read offline.

rapidocr-onnxruntime ships its detection and recognition models inside its wheel, so nothing is
downloaded at run time. It is an optional extra (`pip install -e '.[vision]'`, about 150 MB with
OpenCV and onnxruntime): a bot without it says how to enable photos instead of failing.
"""

from __future__ import annotations

import importlib.util
import io
import warnings
from dataclasses import dataclass
from functools import cache
from typing import Any

ENABLE = "pip install -e '.[vision]'"
MIN_SCORE = 0.5  # the recogniser's own confidence in a line; below it a line is noise
MAX_SIDE = 1600  # Telegram's largest photo size is 1280; a bigger file is scaled down first
MAX_PIXELS = 24_000_000  # decoded, 72 MB of RGB: a 6000×4000 camera file, not a pixel bomb


class VisionMissing(RuntimeError):
    """The OCR extra is not installed."""

    def __init__(self) -> None:
        super().__init__(f"reading photos needs the vision extra: {ENABLE}")


class UnreadableImage(ValueError):
    """The bytes are not an image Pillow can open."""


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    score: float  # the recogniser's confidence, 0–1
    top: float  # where the line is, for reading order
    height: float  # tall letters are the name on a label, small ones the fine print


def available() -> bool:
    return importlib.util.find_spec("rapidocr_onnxruntime") is not None


@cache
def _engine() -> Any:
    if not available():
        raise VisionMissing()
    from rapidocr_onnxruntime import RapidOCR  # the optional extra

    return RapidOCR()


def read_lines(image: bytes) -> list[Line]:
    """The lines of text on a photo, top to bottom (CPU-bound: about a second on 2 cores; run
    it in a thread from async code)."""
    engine = _engine()
    found, _ = engine(_pixels(image))
    lines = []
    for box, text, score in found or []:
        ys = [point[1] for point in box]
        if float(score) >= MIN_SCORE and str(text).strip():
            lines.append(Line(str(text).strip(), float(score), min(ys), max(ys) - min(ys)))
    return sorted(lines, key=lambda line: line.top)


def _pixels(image: bytes) -> Any:
    """The photo's pixels, at most MAX_SIDE a side. Its size is read from the header before
    anything is decoded: a 33 KB PNG can hold 144 megapixels (400 MB decoded). A JPEG is
    decoded at a reduced scale (`draft`); anything still above MAX_PIXELS is refused."""
    import numpy
    from PIL import Image

    try:
        with warnings.catch_warnings():  # the size is checked below, more strictly
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(image))
        if opened.format == "JPEG":
            opened.draft("RGB", (MAX_SIDE, MAX_SIDE))
        width, height = opened.size
        if width * height > MAX_PIXELS:
            raise UnreadableImage(f"too large: {width}×{height} pixels")
        opened.load()
        picture = opened.convert("RGB")
    except UnreadableImage:
        raise
    except Image.DecompressionBombError as exc:
        raise UnreadableImage(f"too large: {exc}") from None
    except Exception as exc:
        raise UnreadableImage(f"not an image: {exc}") from None
    picture.thumbnail((MAX_SIDE, MAX_SIDE))
    return numpy.asarray(picture)
