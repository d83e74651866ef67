"""Wine labels and wine lists drawn with Pillow, for the OCR tests and the label benchmark:
the producer, the name and the vintage in one of a few fonts, turned and blurred a little, as a
phone photo of a bottle would be."""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIRS = (Path("/usr/share/fonts"),)
FONT_NAMES = (
    "DejaVuSerif.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSerifCondensed-Italic.ttf",
    "DejaVuSansCondensed.ttf",
    "LiberationSerif-Regular.ttf",
)
PAPER = ((245, 238, 220), (250, 250, 245), (232, 222, 200), (40, 38, 45))


def fonts() -> list[Path]:
    """The fonts above that this machine has (DejaVu ships with Debian's fontconfig)."""
    found = {f.name: f for d in FONT_DIRS if d.is_dir() for f in d.rglob("*.ttf")}
    return [found[name] for name in FONT_NAMES if name in found]


def _font(path: Path | None, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.truetype(str(path), size) if path else ImageFont.load_default(size=size)


def render_label(lines: Sequence[str], seed: int = 0) -> bytes:
    """A label: the first line largest (the producer), then smaller lines, centred; PNG."""
    rng = random.Random(seed)
    choices = fonts() or [None]
    font_path = choices[seed % len(choices)]
    paper = PAPER[seed % len(PAPER)]
    ink = (235, 230, 220) if sum(paper) < 300 else (30, 22, 20)
    image = Image.new("RGB", (900, 1100), paper)
    draw = ImageDraw.Draw(image)
    y = 220
    for i, line in enumerate(lines):
        size = 64 if i == 0 else (52 if i == 1 else 40)
        font = _font(font_path, size)
        while draw.textlength(line, font=font) > 820 and size > 20:
            size -= 4
            font = _font(font_path, size)
        width = draw.textlength(line, font=font)
        draw.text(((900 - width) / 2, y), line, fill=ink, font=font)
        y += size + 60
    turned = image.rotate(rng.uniform(-4, 4), expand=False, fillcolor=paper)
    blurred = turned.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.1)))
    return _png(blurred)


def render_list(entries: Sequence[tuple[str, str]], seed: int = 0) -> bytes:
    """A wine list: one wine per line with its price, in a plain font; PNG."""
    choices = fonts() or [None]
    font = _font(choices[seed % len(choices)], 30)
    image = Image.new("RGB", (1100, 120 + 70 * len(entries)), (252, 250, 245))
    draw = ImageDraw.Draw(image)
    draw.text((60, 30), "WINE LIST", fill=(20, 20, 20), font=_font(choices[0], 40))
    for i, (name, price) in enumerate(entries):
        y = 110 + 70 * i
        draw.text((60, y), name, fill=(20, 20, 20), font=font)
        draw.text((960, y), price, fill=(20, 20, 20), font=font)
    return _png(image.filter(ImageFilter.GaussianBlur(0.5)))


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
