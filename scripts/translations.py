#!/usr/bin/env python3
"""The bot's own texts in other languages: gettext catalogs under
backend/sommelier/i18n/locales, kept with babel.

    python scripts/translations.py update    extract the marked texts, merge them into each .po
    python scripts/translations.py compile   compile every .po into the .mo the bot reads
    python scripts/translations.py check     list texts a language has no translation for

Texts are marked in the code with N_("…") (and plural(…, "singular", "plural", n)); a new
language is `pybabel init -D sommelier -i …/sommelier.pot -d …/locales -l xx`, then update.
Run with the project's venv (babel is one of its dependencies).
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "backend" / "sommelier" / "i18n" / "locales"
TEMPLATE = LOCALES / "sommelier.pot"
KEYWORDS = ["-k", "N_", "-k", "plural:2,3"]


def babel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])


def update() -> None:
    babel("extract", "--no-location", "--sort-output", *KEYWORDS,
          "-o", str(TEMPLATE), str(ROOT / "backend" / "sommelier"))  # fmt: skip
    babel("update", "-D", "sommelier", "-i", str(TEMPLATE), "-d", str(LOCALES),
          "--no-fuzzy-matching", "--ignore-obsolete")  # fmt: skip


def compile_all() -> None:
    babel("compile", "-D", "sommelier", "-d", str(LOCALES), "--use-fuzzy")


def missing() -> dict[str, list[str]]:
    """Language → the texts it has no translation for."""
    found = {}
    for po in sorted(LOCALES.glob("*/LC_MESSAGES/sommelier.po")):
        with po.open("rb") as handle:
            catalog = read_po(handle)
        empty = [
            str(m.id if isinstance(m.id, str) else m.id[0])
            for m in catalog
            if m.id and (not m.string or (isinstance(m.string, tuple) and not all(m.string)))
        ]
        found[po.parent.parent.name] = empty
    return found


def main() -> None:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "update":
        update()
    elif command == "compile":
        compile_all()
    elif command == "check":
        gaps = {language: texts for language, texts in missing().items() if texts}
        for language, texts in gaps.items():
            print(f"{language}: {len(texts)} untranslated: {texts[:3]}")
        raise SystemExit(1 if gaps else 0)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
