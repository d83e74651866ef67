"""Text that can be stored and shown anywhere: no NUL (PostgreSQL rejects it in text), no lone
surrogates (no database or terminal can encode them), no other C0 or C1 control characters
except tab and line breaks. That also takes the escape sequences out of a model's text (ESC,
BEL, CSI): a terminal shown "\x1b]52;c;…" would write the person's clipboard.

And code fences found in linear time, however hostile the text."""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
FENCE = "```"
# What ends a question, in any script: Greek writes ";" (and U+037E), Arabic "؟".
QUESTION_MARKS = ("?", "？", ";", "\u037e", "؟")


def clean_text(text: str) -> str:
    return _UNSTORABLE.sub("", text)


def clean_value(value: Any) -> Any:
    """`clean_text` applied to every string inside JSON-like data (keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    return value


def fenced_blocks(text: str, tags: tuple[str, ...] = ("json",)) -> list[str]:
    r"""The contents of the ```-fenced blocks of `text` (an optional tag such as "json" after
    the opening fence). Each fence is found with str.find: linear time, where a regex with
    `\s*(.*?)` takes quadratic time on a fence followed by a long run of spaces."""
    blocks = []
    start = text.find(FENCE)
    while start != -1:
        body = start + len(FENCE)
        end = text.find(FENCE, body)
        if end == -1:
            break
        content = text[body:end]
        for tag in tags:
            if content.startswith(tag):
                content = content[len(tag) :]
                break
        blocks.append(content.strip())
        start = text.find(FENCE, end + len(FENCE))
    return blocks


# The one sentence splitter: a sentence ends at its stop, or at a bracket or quote closed after
# it ("(How long does a wine last?)" above a Portuguese answer is a sentence of its own).
SENTENCE = re.compile(r"(?:(?<=[.!?…。！？])|(?<=[.!?…][)\]\"'»”]))\s*(?<=\s|[。！？])")


# A stop that ends no sentence: a title or an abbreviation ("Dr. Loosen", "St. Emilion", "ca.
# 15 Euro") or an initial ("E. Guigal": a why cut back to "… Rouge by E." was shown).
ABBREVIATIONS = ("Dr", "St", "Mt", "Mr", "Ch", "ca", "Ca", "approx", "bzw", "evtl", "ggf", "env")
ABBREVIATED = re.compile(rf"(?:^|\s)(?:{'|'.join(ABBREVIATIONS)}|[A-Z])\.$")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, empty ones left out."""
    found: list[str] = []
    for piece in (s.strip() for s in SENTENCE.split(text.strip())):
        if found and ABBREVIATED.search(found[-1]) and piece:
            found[-1] = f"{found[-1]} {piece}"
        elif piece:
            found.append(piece)
    return found
