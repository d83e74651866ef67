"""Readers for the catalog file formats.

- the project's CSV (one wine a row; list columns separated by ";") and JSON (a list of wine
  objects, or {"wines": [...]}); columns and keys are `WineRecord`'s fields;
- X-Wines wines CSV (list-literal columns, "N.V." vintages) and its ratings CSV.

Readers only parse and validate; they never touch the database. File-level problems (not UTF-8,
missing columns, unknown format) raise `CatalogFileError`; row problems become `RowError`s.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sommelier.agent.text import clean_value
from sommelier.catalog.records import RatingRecord, RowError, WineRecord

XWINES_PREFIX = "xw-"
LIST_SEPARATOR = ";"
OWN_REQUIRED = ("id", "name", "type")
XWINES_WINE_COLUMNS = (
    "WineID",
    "WineName",
    "Type",
    "Elaborate",
    "Grapes",
    "Harmonize",
    "ABV",
    "Body",
    "Acidity",
    "Country",
    "RegionName",
    "WineryName",
    "Vintages",
)
XWINES_RATING_COLUMNS = ("RatingID", "UserID", "WineID", "Vintage", "Rating", "Date")
XWINES_TYPES = {"dessert/port": "fortified"}


class CatalogFileError(Exception):
    """The file as a whole cannot be read; the message says why and names the file."""


@dataclass
class ParsedFile:
    path: str
    kind: str  # own-csv | own-json | xwines-wines | xwines-ratings
    wines: list[tuple[int, WineRecord]] = field(default_factory=list)
    ratings: list[tuple[int, RatingRecord]] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.wines) + len(self.ratings) + len({e.line for e in self.errors})


def read_catalog_file(path: Path) -> ParsedFile:
    text = _read_utf8(path)
    if not text.strip():
        raise CatalogFileError(f"{path}: the file is empty; nothing to import")
    if path.suffix.lower() == ".json":
        return _read_own_json(path, text)
    if path.suffix.lower() != ".csv":
        raise CatalogFileError(f"{path}: unknown catalog format; use .csv or .json")
    header = next(csv.reader(io.StringIO(text)), [])
    header = [h.strip().lstrip("\ufeff") for h in header]
    if "RatingID" in header:
        return _read_xwines_ratings(path, text)
    if "WineID" in header:
        return _read_xwines_wines(path, text)
    return _read_own_csv(path, text)


def _read_utf8(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CatalogFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise CatalogFileError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CatalogFileError(
            f"{path}: not UTF-8 text (bad byte at line {line}); save the file as UTF-8"
        ) from None


def _csv_rows(path: Path, text: str, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip() for f in reader.fieldnames or []]
    reader.fieldnames = fields
    missing = [c for c in required if c not in fields]
    if missing:
        raise CatalogFileError(f"{path}: missing column(s): {', '.join(missing)}")
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise CatalogFileError(f"{path}:{reader.line_num}: broken CSV ({exc})") from None
        yield reader.line_num, row


def _validation_errors(path: str, line: int, exc: ValidationError) -> list[RowError]:
    return [
        RowError(
            path,
            line,
            ".".join(str(p) for p in e["loc"]) or "row",
            e["msg"].removeprefix("Value error, "),
        )
        for e in exc.errors()
    ]


def _add_wine(parsed: ParsedFile, line: int, data: dict[str, Any]) -> None:
    try:
        parsed.wines.append((line, WineRecord.model_validate(data)))
    except ValidationError as exc:
        parsed.errors.extend(_validation_errors(parsed.path, line, exc))


def _split_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(LIST_SEPARATOR) if v.strip()]


def _read_own_csv(path: Path, text: str) -> ParsedFile:
    parsed = ParsedFile(str(path), "own-csv")
    for line, row in _csv_rows(path, text, OWN_REQUIRED):
        if None in row:
            parsed.errors.append(RowError(str(path), line, "row", "more values than columns"))
            continue
        data: dict[str, Any] = {k: v for k, v in row.items() if k and v is not None}
        for list_column in ("grapes", "food_pairings"):
            if list_column in data:
                data[list_column] = _split_list(data[list_column])
        _add_wine(parsed, line, data)
    return parsed


def _read_own_json(path: Path, text: str) -> ParsedFile:
    parsed = ParsedFile(str(path), "own-json")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    items = document.get("wines") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise CatalogFileError(f'{path}: expected a list of wines or {{"wines": [...]}}')
    lines = _json_item_lines(text, len(items))
    for index, item in enumerate(items):
        line = lines[index] if index < len(lines) else index + 1
        if not isinstance(item, dict):
            parsed.errors.append(RowError(str(path), line, "row", "not a JSON object"))
            continue
        _add_wine(parsed, line, item)
    return parsed


def _json_item_lines(text: str, count: int) -> list[int]:
    """Line where each top-level wine object starts, so errors can point at it."""
    lines: list[int] = []
    decoder = json.JSONDecoder()
    start = text.find("[", text.find('"wines"') if text.lstrip().startswith("{") else 0)
    pos = start + 1
    while len(lines) < count and 0 < pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        lines.append(text.count("\n", 0, pos) + 1)
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
    return lines


def _literal_list(value: str, column: str) -> list[Any]:
    try:
        parsed = ast.literal_eval(value) if value.strip() else []
    except (ValueError, SyntaxError):
        raise ValueError(f"{column}: not a list literal: {value[:60]!r}") from None
    if not isinstance(parsed, list):
        raise ValueError(f"{column}: not a list literal: {value[:60]!r}")
    return parsed


def _latest_vintage(vintages: list[Any]) -> str | None:
    years = [int(v) for v in vintages if isinstance(v, int) or (isinstance(v, str) and v.isdigit())]
    if years:
        return str(max(years))
    return "NV" if vintages else None


def _read_xwines_wines(path: Path, text: str) -> ParsedFile:
    parsed = ParsedFile(str(path), "xwines-wines")
    for line, row in _csv_rows(path, text, XWINES_WINE_COLUMNS):
        try:
            grapes = _literal_list(row["Grapes"], "Grapes")
            foods = _literal_list(row["Harmonize"], "Harmonize")
            vintages = _literal_list(row["Vintages"], "Vintages")
        except ValueError as exc:
            column, _, reason = str(exc).partition(": ")
            parsed.errors.append(RowError(str(path), line, column, reason))
            continue
        wine_type = row["Type"] or ""
        data = {
            "id": f"{XWINES_PREFIX}{row['WineID'].strip()}" if row["WineID"].strip() else "",
            "name": row["WineName"],
            "producer": row["WineryName"],
            "country": row["Country"],
            "region": row["RegionName"],
            "grapes": [str(g) for g in grapes],
            "type": XWINES_TYPES.get(wine_type.strip().lower(), wine_type),
            # X-Wines has no sweetness; dessert and fortified wines are sweet by definition.
            "sweetness": "sweet" if wine_type.lower().startswith("dessert") else None,
            "body": row["Body"],
            "acidity": row["Acidity"],
            "abv": row["ABV"],
            "vintage": _latest_vintage(vintages),
            "description": (row.get("Elaborate") or "").strip() or None,
            "food_pairings": [str(f) for f in foods],
        }
        _add_wine(parsed, line, data)
    return parsed


# The wine_ratings columns' lengths: longer values are row errors, not SQL errors.
RATING_LIMITS = {"RatingID": 64, "UserID": 64, "Vintage": 8}


def _too_long(path: Path, line: int, row: dict[str, Any]) -> RowError | None:
    for column, limit in RATING_LIMITS.items():
        if len((row.get(column) or "").strip()) > limit:
            return RowError(str(path), line, column, f"longer than {limit} characters")
    return None


def _read_xwines_ratings(path: Path, text: str) -> ParsedFile:
    parsed = ParsedFile(str(path), "xwines-ratings")
    for line, row in _csv_rows(path, text, XWINES_RATING_COLUMNS):
        row = clean_value(row)
        too_long = _too_long(path, line, row)
        if too_long is not None:
            parsed.errors.append(too_long)
            continue
        try:
            rating = float(row["Rating"])
        except (TypeError, ValueError):
            parsed.errors.append(
                RowError(str(path), line, "Rating", f"not a number: {row['Rating']!r}")
            )
            continue
        if not 0 <= rating <= 5:
            parsed.errors.append(RowError(str(path), line, "Rating", f"{rating} is not 0 to 5"))
            continue
        wine_id = (row["WineID"] or "").strip()
        if not wine_id:
            parsed.errors.append(RowError(str(path), line, "WineID", "is required"))
            continue
        rated_at = None
        if row["Date"]:
            try:
                rated_at = datetime.fromisoformat(row["Date"].strip()).replace(tzinfo=UTC)
            except ValueError:
                parsed.errors.append(
                    RowError(str(path), line, "Date", f"not a date: {row['Date']!r}")
                )
                continue
        vintage = (row["Vintage"] or "").strip()
        parsed.ratings.append(
            (
                line,
                RatingRecord(
                    source="xwines",
                    source_rating_id=row["RatingID"].strip(),
                    wine_external_id=f"{XWINES_PREFIX}{wine_id}",
                    rater_id=(row["UserID"] or "").strip() or None,
                    vintage="NV" if vintage.upper() == "N.V." else (vintage or None),
                    rating=rating,
                    rated_at=rated_at,
                ),
            )
        )
    return parsed
