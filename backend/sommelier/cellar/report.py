"""The cellar as a person reads it, in their language: the total, then the bottles by
readiness. The same text in Telegram (`/cellar`) and the terminal chat."""

from __future__ import annotations

from collections.abc import Sequence

from sommelier.cellar.store import READINESS_ORDER, Held, Kept, label
from sommelier.cellar.windows import Readiness
from sommelier.i18n.translations import N_, Translate, translator

EMPTY = N_(
    "The cellar is empty. Send me your bottles as a CSV file (this bot's own, or an export "
    "from CellarTracker or Vivino) and I will add them."
)
TOTAL = N_("Bottles in the cellar: {bottles}")
HEADINGS = {
    Readiness.peak: N_("At their peak"),
    Readiness.ready: N_("Ready to drink"),
    Readiness.too_young: N_("Too young"),
    Readiness.past: N_("Past their peak"),
}


def render(found: Sequence[Held], language: str | None) -> str:
    """The cellar as text: the total, then the bottles under their readiness, peak first."""
    t = translator(language)
    if not found:
        return t(EMPTY)
    head = t(TOTAL).format(bottles=sum(h.bottle.quantity for h in found))
    return "\n".join([head, *_by_readiness(found, t)])


REMINDER = N_("🔔 From your cellar this week:")


def reminder(found: Sequence[Held], language: str | None) -> str:
    """A weekly reminder (cellar/reminders.py): the bottles that reached their peak or passed
    it, under their readiness."""
    t = translator(language)
    return "\n".join([t(REMINDER), *_by_readiness(found, t)])


def _by_readiness(found: Sequence[Held], t: Translate) -> list[str]:
    lines: list[str] = []
    for readiness in READINESS_ORDER:
        here = [h for h in found if h.readiness == readiness]
        if not here:
            continue
        lines += ["", t(HEADINGS[readiness])]
        lines += [_bottle_line(h) for h in here]
    return lines


OWN = N_("Also in your cellar, not in the catalog:")


def own_lines(found: Sequence[Held], language: str | None) -> str:
    """Their bottles the catalog lacks, under a search of their cellar: no card can show them,
    so a line each, as /cellar writes it, with its readiness."""
    if not found:
        return ""
    t = translator(language)
    lines = [f"{_bottle_line(h)} · {t(HEADINGS[h.readiness])}" for h in found]
    return "\n".join([t(OWN), *lines])


def _bottle_line(h: Held) -> str:
    b = h.bottle
    vintage = f" {b.vintage}" if b.vintage else ""
    place = f" · {b.location}" if b.location else ""
    return f"• {b.quantity} × {label(b.producer, b.name)}{vintage}{place}"


IN_CELLAR = N_("In your cellar: {bottles}")


def kept_line(kept: Kept, language: str | None) -> str:
    """A card's line for a wine the person owns: "In your cellar: 2 · rack B · Ready to drink"."""
    t = translator(language)
    parts = [t(IN_CELLAR).format(bottles=kept.quantity), *kept.places, t(HEADINGS[kept.readiness])]
    return " · ".join(parts)
