"""The bot's own texts in the person's language: gettext catalogs (`locales/<lang>/LC_MESSAGES/
sommelier.po`, compiled to `.mo`), extracted and compiled with babel. English is the source and
the fallback for any text or language without a translation.

Texts are written in the code in English and marked: `N_("…")` where a constant is defined (it
only marks), `translator(language)("…")` where it is shown. `python scripts/translations.py`
extracts, updates and compiles the catalogs.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable
from functools import cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency, format_decimal

DOMAIN = "sommelier"
LOCALES = Path(__file__).parent / "locales"

Translate = Callable[[str], str]


def N_(text: str) -> str:  # gettext's usual name for "mark for translation"
    """Marks a text for extraction; it is translated where it is shown."""
    return text


@cache
def _catalog(language: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, LOCALES, languages=[language], fallback=True)


def translator(language: str | None) -> Translate:
    """gettext for `language` (English, the source, for None or a language without a catalog)."""
    return _catalog(language or "en").gettext


def plural(language: str | None, singular: str, several: str, n: int) -> str:
    return _catalog(language or "en").ngettext(singular, several, n)


@cache
def locale(language: str | None) -> str:
    """The locale the bot's texts are formatted in (lists, numbers, money, country names): the
    language's own when it has texts, else English like the texts themselves (Croatian had
    English sentences with "i" and "Francuska" in them)."""
    if not language or not (LOCALES / language / "LC_MESSAGES" / f"{DOMAIN}.mo").exists():
        return "en"
    try:
        return str(Locale.parse(language))
    except (ValueError, UnknownLocaleError):
        return "en"


def money(amount: float, currency: str | None, language: str | None) -> str:
    """ "16,00 €" in German, "€16.00" in English; a bare number without a currency."""
    if not currency:
        return format_decimal(amount, locale=locale(language))
    return str(format_currency(amount, currency, locale=locale(language)))


def number(value: float, language: str | None) -> str:
    return str(format_decimal(value, locale=locale(language)))


@cache
def country(key: str, language: str | None) -> str:
    """A country's name in `language` ("portugal" → "Portugal", "Португалия")."""
    english = Locale.parse("en").territories
    code = next((c for c, name in english.items() if name.casefold() == key.casefold()), None)
    if code is None:
        return key.title()
    try:
        return str(Locale.parse(locale(language)).territories.get(code, english[code]))
    except (ValueError, UnknownLocaleError):
        return str(english[code])
