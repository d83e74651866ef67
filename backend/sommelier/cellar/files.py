"""Cellar files: the project's own CSV (what `sommelier cellar export` writes), CellarTracker's
"My Cellar" export and Vivino's cellar export, read into rows; a bad row is named by line and
field, and a file with one is not imported at all."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import date
from typing import Protocol

from sommelier.catalog.records import RowError

# CellarTracker writes 1001 for a wine without a vintage.
CELLARTRACKER_NV = "1001"
OLDEST_VINTAGE = 1800


@dataclass
class CellarRow:
    """One line of a cellar file: bottles of one wine and vintage in one place."""

    line: int
    name: str
    quantity: int
    producer: str | None = None
    vintage: str | None = None  # a year, or "NV"
    location: str | None = None
    price_paid: float | None = None
    currency: str | None = None
    drink_from: int | None = None
    drink_until: int | None = None
    type: str | None = None
    country: str | None = None
    region: str | None = None
    grapes: list[str] = field(default_factory=list)
    wine_id: str | None = None  # the catalog's id, when the file names it


# The project's own columns, in the order `export` writes them.
OWN_COLUMNS = (
    "wine_id", "producer", "name", "vintage", "quantity", "location", "price_paid", "currency",
    "drink_from", "drink_until", "type", "country", "region", "grapes",
)  # fmt: skip


class CellarFileError(Exception):
    """The file as a whole cannot be read, or some of its rows are bad (`errors`)."""

    def __init__(self, message: str, errors: Iterable[RowError] = ()) -> None:
        super().__init__(message)
        self.errors = list(errors)


@dataclass(frozen=True)
class CellarFile:
    format: str  # csv | cellartracker | vivino
    rows: list[CellarRow]
    skipped: list[str]  # lines with no bottle in the cellar (CellarTracker's pending ones)


def read_file(data: bytes, name: str) -> CellarFile:
    """The rows of a cellar file in any of the formats; raises CellarFileError naming every
    bad row (line and field) when there is one."""
    text = _decoded(data)
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise CellarFileError(f"{name}: the file is empty")
    reader = csv.DictReader(io.StringIO(text), dialect=_dialect(lines[0]))
    header = {(h or "").strip() for h in reader.fieldnames or ()}
    kind, parse = _format(header, name)
    rows: list[CellarRow] = []
    errors: list[RowError] = []
    skipped: list[str] = []
    for number, raw in enumerate(reader, start=2):
        record = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k}
        if not any(record.values()):
            continue
        problems: list[tuple[str, str]] = []
        row = parse(number, record, problems)
        errors += [RowError(name, number, column, why) for column, why in problems]
        if row is not None and not problems:
            if row.quantity == 0:
                skipped.append(f"line {number}: no bottle in the cellar (quantity 0)")
            else:
                rows.append(row)
    if errors:
        raise CellarFileError(f"{name}: {len(errors)} bad field(s); nothing was imported", errors)
    if not rows:
        raise CellarFileError(f"{name}: no bottles in the file")
    return CellarFile(kind, rows, skipped)


def _decoded(data: bytes) -> str:
    # CellarTracker's exports are Windows-1252 ("Côte" is one byte), others UTF-8.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _dialect(first_line: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(first_line, delimiters=",;\t")
    except csv.Error:
        return csv.excel


Parse = Callable[[int, Mapping[str, str], list[tuple[str, str]]], CellarRow | None]


def _format(header: set[str], name: str) -> tuple[str, Parse]:
    if {"iWine", "Wine", "Quantity"} <= header:
        return "cellartracker", _cellartracker
    if {"Winery", "Wine name"} <= header:
        if not header & set(VIVINO_COUNTS):
            raise CellarFileError(
                f"{name}: this Vivino file lists the wines you scanned, not your cellar; "
                "export your cellar from Vivino (it has a bottle count per wine)"
            )
        return "vivino", _vivino
    if {"name", "quantity"} <= header:
        return "csv", _own
    raise CellarFileError(
        f"{name}: line 1 names none of the formats I read: this project's CSV "
        f"({', '.join(OWN_COLUMNS)}), CellarTracker's export of My Cellar, or Vivino's cellar "
        "export"
    )


# -- the three formats -------------------------------------------------------------------------


def _own(line: int, r: Mapping[str, str], problems: list[tuple[str, str]]) -> CellarRow | None:
    return _row(
        line, problems,
        name=("name", r.get("name", "")), quantity=("quantity", r.get("quantity", "")),
        producer=r.get("producer"), vintage=("vintage", r.get("vintage", "")),
        location=r.get("location"), price_paid=("price_paid", r.get("price_paid", "")),
        currency=r.get("currency"), drink_from=("drink_from", r.get("drink_from", "")),
        drink_until=("drink_until", r.get("drink_until", "")), type=("type", r.get("type", "")),
        country=r.get("country"), region=r.get("region"),
        grapes=[g.strip() for g in r.get("grapes", "").split(";") if g.strip()],
        wine_id=r.get("wine_id") or None,
    )  # fmt: skip


def _cellartracker(
    line: int, r: Mapping[str, str], problems: list[tuple[str, str]]
) -> CellarRow | None:
    place = " / ".join(p for p in (r.get("Location", ""), r.get("Bin", "")) if p) or None
    vintage = r.get("Vintage", "")
    price = r.get("Price", "")
    grape = r.get("Varietal") or r.get("MasterVarietal") or ""
    return _row(
        line, problems,
        name=("Wine", r.get("Wine", "")), quantity=("Quantity", r.get("Quantity", "")),
        producer=r.get("Producer"),
        vintage=("Vintage", "NV" if vintage == CELLARTRACKER_NV else vintage),
        location=place, price_paid=("Price", "" if _zero(price) else price),
        currency=r.get("Currency"),
        drink_from=("BeginConsume", r.get("BeginConsume", "")),
        drink_until=("EndConsume", r.get("EndConsume", "")),
        type=("Type", r.get("Type") or r.get("Color") or ""),
        country=r.get("Country"), region=r.get("Region"),
        grapes=[grape] if grape and "blend" not in grape.lower() else [],
    )  # fmt: skip


VIVINO_COUNTS = ("User cellar count", "Bottles in cellar", "Quantity")


def _vivino(line: int, r: Mapping[str, str], problems: list[tuple[str, str]]) -> CellarRow | None:
    column = next(c for c in VIVINO_COUNTS if c in r)
    vintage = r.get("Vintage", "")
    start, end = _window(r.get("Drinking Window", ""))
    return _row(
        line, problems,
        name=("Wine name", r.get("Wine name", "")), quantity=(column, r.get(column, "")),
        producer=r.get("Winery"),
        vintage=("Vintage", "NV" if vintage.upper().replace(".", "") in ("NV", "") else vintage),
        location=None, price_paid=("Wine price", r.get("Wine price", "")), currency=None,
        drink_from=("Drinking Window", start), drink_until=("Drinking Window", end),
        type=("Wine type", r.get("Wine type", "").lower().replace(" wine", "")),
        country=r.get("Country"), region=r.get("Region"), grapes=[],
    )  # fmt: skip


def _window(text: str) -> tuple[str, str]:
    """Vivino's "2024 - 2030" as its two years."""
    years = re.findall(r"\d{4}", text)
    return (years[0], years[1]) if len(years) == 2 else ("", "")


# -- one row, checked field by field -----------------------------------------------------------

Checked = tuple[str, str]  # (the file's column, its text)


def _row(line: int, problems: list[tuple[str, str]], **given: object) -> CellarRow | None:
    """A CellarRow from its fields; `Checked` ones are parsed here and their problems noted
    under the file's own column name."""

    def checked(key: str, parse: Callable[[str], object]) -> object:
        value = given[key]
        if not isinstance(value, tuple):
            return value
        column, text = value
        try:
            return parse(text)
        except ValueError as exc:
            problems.append((column, str(exc)))
            return None

    parsers: dict[str, Callable[[str], object]] = {
        "name": _required, "quantity": _quantity, "vintage": _vintage,
        "price_paid": _price, "drink_from": _year, "drink_until": _year, "type": _type,
    }  # fmt: skip
    names = [f.name for f in fields(CellarRow) if f.name in given]
    values = {name: checked(name, parsers.get(name, str)) for name in names}
    if problems:
        return None
    texts = {k: (v or None) if isinstance(v, str) and k != "name" else v for k, v in values.items()}
    return CellarRow(line=line, **texts)  # type: ignore[arg-type]


def _required(text: str) -> str:
    if not text:
        raise ValueError("empty: every bottle needs its wine's name")
    return text


def _quantity(text: str) -> int:
    if not re.fullmatch(r"\d{1,5}", text):
        raise ValueError(f"{text!r} is not a number of bottles")
    return int(text)


def _vintage(text: str) -> str | None:
    if not text:
        return None
    if text.upper() == "NV":
        return "NV"
    if not re.fullmatch(r"\d{4}", text) or not OLDEST_VINTAGE <= int(text) <= date.today().year:
        raise ValueError(f"{text!r} is not a vintage (a year, or NV)")
    return text


def _year(text: str) -> int | None:
    if not text or _zero(text):
        return None
    if not re.fullmatch(r"\d{4}", text):
        raise ValueError(f"{text!r} is not a year")
    return int(text)


def _price(text: str) -> float | None:
    if not text:
        return None
    cleaned = re.sub(r"[^\d.,]", "", text).replace(",", ".")
    try:
        price = float(cleaned)
    except ValueError:
        raise ValueError(f"{text!r} is not a price") from None
    if price < 0:
        raise ValueError(f"{text!r} is not a price")
    return price


def _type(text: str) -> str | None:
    """The style in any exporter's words ("White - Sparkling", "Dessert Wine", "Rosé"); a style
    none of ours names (orange, say) is left empty rather than refused."""
    folded = text.lower()
    for style, words in STYLE_WORDS:
        if any(w in folded for w in words):
            return style
    return None


# Checked in this order: a sparkling white is sparkling, a sweet red dessert.
STYLE_WORDS = (
    ("sparkling", ("sparkling", "champagne")),
    ("fortified", ("fortified", "port", "sherry")),
    ("dessert", ("dessert", "sweet")),
    ("rosé", ("rosé", "rose")),
    ("red", ("red",)),
    ("white", ("white",)),
)


def _zero(text: str) -> bool:
    return bool(re.fullmatch(r"0+([.,]0+)?", text))


def write_csv(bottles: Iterable[CellarBottleLike], readiness: Iterable[str]) -> str:
    """The bottles in the project's own CSV (what `read_file` reads back), with each bottle's
    readiness this year as a last column for the person's reading (ignored on import)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*OWN_COLUMNS, "readiness"])
    for bottle, ready in zip(bottles, readiness, strict=True):
        values = [getattr(bottle, column) for column in OWN_COLUMNS]
        writer.writerow([_cell(v) for v in values] + [ready])
    return buffer.getvalue()


class CellarBottleLike(Protocol):
    wine_id: str | None
    name: str
    quantity: int


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
