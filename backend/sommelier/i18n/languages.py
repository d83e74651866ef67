"""Which language a person writes in, identified offline by lingua (its models ship in the
wheel), and how each language is named to a model.

Short messages are hard for any detector ("Sekt?", "Under 15 euros?"), so a message whose
language is unsure takes the language of the person's earlier messages, then the language
their client reports (Telegram's `language_code`), then English.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache

from babel import Locale, UnknownLocaleError
from lingua import IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder

# The languages the word lists and the bot's texts cover, then other common languages a small
# model writes well enough: one the detector lacks is read as its nearest candidate (Finnish
# as Polish, Hungarian as Dutch, Romanian as French: answered in the wrong language). Fewer
# candidates make short texts more reliable, so close neighbours of a listed language are left
# out (Slovak beside Czech, Catalan beside Spanish); each Latin-script language's model costs
# memory, loaded on first use.
COVERED = ("en", "de", "fr", "es", "it", "pt", "ru", "nl")
DETECTED = (
    *COVERED, "uk", "pl", "sv", "tr", "el", "ja", "zh", "ko", "cs", "hi",
    "fi", "hu", "ro", "vi", "id", "da", "nb", "bg", "he", "ar", "fa", "th", "hr",
)  # fmt: skip
FALLBACK = "en"
# lingua's relative confidence: one message decides alone above SURE; a guess counts when it
# is above LIKELY and AHEAD times the next language's.
SURE, LIKELY, AHEAD = 0.8, 0.35, 2.0
# A language without word lists also counts above FOREIGN when it is FAR_AHEAD of every
# language the lists cover.
FOREIGN, FAR_AHEAD = 0.25, 5.0
MIN_LETTERS = 3
# A sentence of this many words, on which the detector is FAR_AHEAD of every other language,
# is in that language whatever the word lists vote: one shared word ("champagne", "promotion")
# answered "Un champagne pour fêter une promotion ?" in English.
SENTENCE_WORDS = 4
# lingua's Romanian models were learnt from text written with the cedilla letters (ş, ţ); the
# comma-below letters that phones type (ș, ț) are unknown to them, and "Ce vin roșu merge la
# sarmale?" read as Spanish. The same letters by the cedilla are Romanian to it.
_DETECTOR_LETTERS = str.maketrans("șțȘȚ", "şţŞŢ")


# Letters only some languages write: a lower-case word that holds one rules the others out
# ("Ce vin bem la sarmale cu mămăligă?" was Danish at 0.30 and "Ce vin merge la mici cu
# muștar?" Spanish at 0.41, answered in those; ă and ș are Romanian). A capitalised word may be
# a wine's name ("Viña Tondonia" in an English message), so it does not count.
WRITTEN_BY = {
    "ă": ("ro", "vi"), "ş": ("ro", "tr"), "ţ": ("ro",), "ő": ("hu",), "ű": ("hu",),
    "ł": ("pl",), "ą": ("pl",), "ę": ("pl",), "ś": ("pl",), "ź": ("pl",), "ż": ("pl",),
    "ń": ("pl",), "ř": ("cs",), "ů": ("cs",), "ě": ("cs",), "ğ": ("tr",), "ı": ("tr",),
    "ø": ("da", "nb"), "æ": ("da", "nb"), "å": ("sv", "da", "nb", "fi"), "ß": ("de",),
    "ñ": ("es",), "ã": ("pt", "vi"), "õ": ("pt", "vi"), "đ": ("vi",), "ơ": ("vi",),
    "ư": ("vi",),
}  # fmt: skip


@cache
def _detector() -> LanguageDetector:
    codes = [getattr(IsoCode639_1, code.upper()) for code in DETECTED]
    languages = [Language.from_iso_code_639_1(code) for code in codes]
    return LanguageDetectorBuilder.from_languages(*languages).build()


def names_out(text: str) -> str:
    """What the detector reads of a message: not the wine names in it. In another script than
    the Latin one, its Latin words are names ("Я купив дві пляшки Tokaji Aszú 5 Puttonyos 2017"
    was Hungarian at 0.90); in the Latin script, a run of capitalised words inside a sentence
    is one ("Har just köpt tre flaskor Catena Zapata Malbec Argentino 2019" was Italian), when
    three words are left without it."""
    words = text.split()
    other = [w for w in words if _script(w) not in (None, "LATIN")]
    if other and len(other) < len(words) and sum(map(len, other)) >= MIN_LETTERS:
        return " ".join(other)
    kept = " ".join(_NAME_RUN.sub(" ", text).split())
    return kept if sum(any(ch.isalpha() for ch in w) for w in kept.split()) >= 3 else text


# Two or more capitalised words in a row, not where a sentence starts.
_NAME_RUN = re.compile(r"(?<![.!?¿¡]\s)(?<!^)\b(?:[A-ZÀ-ÖØ-Þ][\w'’.-]*\s+)+[A-ZÀ-ÖØ-Þ][\w'’.-]*")


def _script(word: str) -> str | None:
    """The script of a word's first letter ("LATIN", "CYRILLIC", "CJK", "HIRAGANA"…)."""
    letter = next((ch for ch in word if ch.isalpha()), None)
    return unicodedata.name(letter, "").split(" ")[0] or None if letter else None


def ranked(text: str) -> list[tuple[str, float]]:
    """Every candidate language of `text` with lingua's confidence, best first; empty when the
    text has too few letters to tell."""
    if sum(ch.isalpha() for ch in text) < MIN_LETTERS:
        return []
    text = names_out(text).translate(_DETECTOR_LETTERS)
    values = _detector().compute_language_confidence_values(text)
    found = [(v.language.iso_code_639_1.name.lower(), v.value) for v in values]
    return _written(text, found)


def _written(text: str, found: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The candidates that write every telling letter of the text's lower-case words, their
    confidences summing to 1 again; all of them when none does."""
    letters = {ch for word in text.split() if word.islower() for ch in word if ch in WRITTEN_BY}
    if not letters:
        return found
    kept = [(code, value) for code, value in found if all(code in WRITTEN_BY[ch] for ch in letters)]
    total = sum(value for _, value in kept)
    if total <= 0:
        return found
    return [(code, value / total) for code, value in kept]


def detect(text: str) -> tuple[str, float] | None:
    """(language code, confidence 0–1) of `text`, or None when it has too few letters."""
    found = ranked(text)
    return found[0] if found else None


def likely(text: str) -> str | None:
    """The language of `text` when the detector's guess is clearly ahead, else None."""
    found = ranked(text)
    return found[0][0] if _likely(found) else None


def _likely(found: list[tuple[str, float]]) -> bool:
    """A best guess clearly ahead of the next one ("Che tempo fa domani a Roma?": Italian)."""
    if not found:
        return False
    second = found[1][1] if len(found) > 1 else 0.0
    return found[0][1] >= LIKELY and found[0][1] >= AHEAD * second


def _far_ahead(found: list[tuple[str, float]]) -> bool:
    """A guess that is unsure among its neighbours (Danish, Norwegian, Swedish share most
    words) but far ahead of every language the word lists cover: "Ce vin alb se potrivește
    cu peștele?" is Romanian at 0.31 and French at nearly 0, whatever "vin" votes."""
    if not found or found[0][1] < FOREIGN:
        return False
    covered = max((value for code, value in found if code in COVERED), default=0.0)
    return found[0][1] >= FAR_AHEAD * covered


def _clear_sentence(text: str, found: list[tuple[str, float]]) -> bool:
    """A sentence the detector reads far better as one language than as any other."""
    if len(text.split()) < SENTENCE_WORDS or not _likely(found):
        return False
    second = found[1][1] if len(found) > 1 else 0.0
    return found[0][1] >= FAR_AHEAD * second


def _foreign_lead(found: list[tuple[str, float]]) -> bool:
    """The detector reads a language without a word list first, and not by a hair."""
    return bool(found) and found[0][0] not in COVERED and found[0][1] >= FOREIGN


def _voted(votes: Mapping[str, int] | None, found: list[tuple[str, float]]) -> str | None:
    """The language whose own words the text uses most; a tie goes to the detector's order. A
    language the detector all but rules out gets no vote when it reads the text as a language
    without a list: "ce" and "vin" are French words, but "Ce vin roșu merge la sarmale?" is not
    French by any of its letters."""
    if _foreign_lead(found):
        plausible = {code for code, value in found if value * FAR_AHEAD >= found[0][1]}
        votes = {code: n for code, n in (votes or {}).items() if code in plausible}
    most = max((votes or {}).values(), default=0)
    if most == 0:
        return None
    tied = [code for code, n in (votes or {}).items() if n == most]
    order = [code for code, _ in found]
    return min(tied, key=lambda code: order.index(code) if code in order else len(order))


def choose(
    text: str,
    earlier: Sequence[str] = (),
    hint: str | None = None,
    votes: Mapping[str, int] | None = None,
) -> str:
    """The language to answer `text` in: its own when the detector is sure; else that of the
    conversation (the person's earlier messages with this one); else the detector's guess on a
    sentence it reads far better as that language; else a language without a word list when the
    detector's guess is clearly ahead; else the one whose known words the text
    uses most (`votes`, from the word lists); else the client's language setting
    (`hint`); else the detector's guess when it is clearly ahead; else English (a weak guess on
    a few words would answer "a shiraz" in Italian)."""
    found = ranked(text)
    if found and found[0][1] >= SURE:
        return found[0][0]
    if earlier:
        context = ranked(" ".join([*earlier[-3:], text]))
        if _likely(context) or (_far_ahead(context) and context[0][0] not in COVERED):
            return context[0][0]
    if _clear_sentence(text, found):
        return found[0][0]
    if (_likely(found) or _far_ahead(found)) and found[0][0] not in COVERED:
        # The word lists vote only for the languages they cover: their words in a Swedish
        # message ("vin", "till") are no vote against Swedish (it was answered in French).
        return found[0][0]
    voted = _voted(votes, found)
    if voted is not None:
        return voted
    if any((votes or {}).values()) and _foreign_lead(found):
        return found[0][0]  # the lists' words voted only for languages its letters rule out
    hinted = base(hint)
    if hinted in DETECTED:
        return hinted
    if _likely(found) or (found and not _latin(text)):
        return found[0][0]  # English is never the answer to a Cyrillic or Hebrew message
    return FALLBACK


def _latin(text: str) -> bool:
    """Whether most of the text's letters are Latin ones."""
    letters = [ch for ch in text if ch.isalpha()]
    latin = sum(ch.isascii() or "LATIN" in unicodedata.name(ch, "") for ch in letters)
    return latin * 2 >= len(letters)


def base(code: str | None) -> str | None:
    """ "pt-BR" → "pt"; None for nothing."""
    if not code:
        return None
    return code.replace("_", "-").split("-")[0].lower() or None


@cache
def english_name(code: str) -> str:
    """How a model is told the language: "German", "Russian"."""
    try:
        return str(Locale.parse(code).get_display_name("en"))
    except (ValueError, UnknownLocaleError):
        return "English"


@cache
def native_name(code: str) -> str:
    """How the language names itself: "Deutsch", "русский"."""
    try:
        return str(Locale.parse(code).get_display_name(code))
    except (ValueError, UnknownLocaleError):
        return english_name(code)


WARM = ("A red wine, please.", "Красное вино", "Κόκκινο κρασί", "赤ワイン", "레드 와인")


def warm() -> None:
    """Load the detector's models now (about 3 s for the Latin-script languages), so the
    first person's first message does not wait for them."""
    for text in WARM:
        detect(text)
