"""The text on a photo, read offline.

rapidocr (3.x, maintained; it replaced rapidocr-onnxruntime 1.4, which stopped at Python 3.12)
ships its default detection, orientation and recognition models (PP-OCRv6, multilingual) inside
its wheel. It fetches a model only when asked for one it does not ship, and a font only to draw
results: the engine is pinned to the shipped files and never draws, so nothing is fetched at run
time (tests/integration/test_label_photos.py reads a label with the network refused). It is an
optional extra (`pip install -e '.[vision]'`, about 190 MB with OpenCV and onnxruntime): a bot
without it says how to enable photos instead of failing.
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


# The models rapidocr's wheel ships (its `models` folder), named so that a release that renames
# or drops one fails at start-up here instead of downloading one at a person's first photo.
SHIPPED = {
    "Det.model_path": "PP-OCRv6_det_small.onnx",
    "Cls.model_path": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
    "Rec.model_path": "PP-OCRv6_rec_small.onnx",
}


def available() -> bool:
    return importlib.util.find_spec("rapidocr") is not None and (
        importlib.util.find_spec("onnxruntime") is not None
    )


@cache
def _engine() -> Any:
    if not available():
        raise VisionMissing()
    from pathlib import Path

    import rapidocr  # the optional extra

    models = Path(rapidocr.__file__).parent / "models"
    params: dict[str, Any] = {key: str(models / name) for key, name in SHIPPED.items()}
    missing = [path for path in params.values() if not Path(path).is_file()]
    if missing:
        raise RuntimeError(f"rapidocr's wheel lacks its models: {', '.join(missing)}")
    params["Global.log_level"] = "warning"  # it logs every model it loads at info
    return rapidocr.RapidOCR(params=params)


def read_lines(image: bytes) -> list[Line]:
    """The lines of text on a photo, top to bottom (CPU-bound: about a second on 2 cores; run
    it in a thread from async code)."""
    found = _engine()(_pixels(image))
    boxes = found.boxes if found.boxes is not None else []
    lines = []
    for box, text, score in zip(boxes, found.txts or (), found.scores or (), strict=False):
        ys = [float(point[1]) for point in box]
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
