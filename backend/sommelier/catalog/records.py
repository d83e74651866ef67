"""Validated wine and rating records, whatever file format they came from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sommelier.agent.text import clean_value
from sommelier.catalog.vocabulary import (
    ACIDITY,
    BODIES,
    BODY_ALIASES,
    SWEETNESS,
    SWEETNESS_ALIASES,
    TYPE_ALIASES,
    WINE_TYPES,
    canonical_choice,
    canonical_country,
    canonical_food,
    canonical_grape,
    fold,
)


def _choice(value: Any, choices: tuple[str, ...], aliases: dict[str, str]) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    found = canonical_choice(str(value), choices, aliases)
    if found is None:
        raise ValueError(f"{value!r} is not one of: {', '.join(choices)}")
    return found


class WineRecord(BaseModel):
    """One wine as imported. Field names are the documented import format's columns; lengths
    are the `wines` columns' own, so a long field is a row error on every database (PostgreSQL
    would refuse it with a traceback, SQLite would store it silently)."""

    model_config = ConfigDict(str_strip_whitespace=True, extra="forbid")

    id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=300)
    producer: str | None = Field(default=None, max_length=300)
    country: str | None = Field(default=None, max_length=100)
    region: str | None = Field(default=None, max_length=200)
    grapes: list[str] = Field(default_factory=list)
    type: str
    sweetness: str | None = None
    body: str | None = None
    acidity: str | None = None
    # X-Wines lists a few grappas and marcs (up to 50%), so the bound is a spirit's, not a wine's.
    abv: float | None = Field(default=None, ge=0, le=80)
    vintage: str | None = None
    price: float | None = Field(default=None, ge=0)
    currency: str | None = Field(default=None, min_length=3, max_length=3)
    description: str | None = None
    food_pairings: list[str] = Field(default_factory=list)
    rating: float | None = Field(default=None, ge=0, le=5)
    rating_count: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        # A NUL or a lone surrogate cannot be stored (PostgreSQL refuses NUL in text).
        return clean_value(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _keys_fit(self) -> WineRecord:
        # Folding can lengthen a name ("ß" becomes "ss"); the search keys have the same limits.
        for name, limit in (("country", 100), ("region", 200)):
            value = getattr(self, name)
            if value and len(fold(value)) > limit:
                raise ValueError(f"{name}: longer than {limit} characters once folded")
        return self

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> str:
        found = _choice(value, WINE_TYPES, TYPE_ALIASES)
        if found is None:
            raise ValueError("is required")
        return found

    @field_validator("sweetness", mode="before")
    @classmethod
    def _sweetness(cls, value: Any) -> str | None:
        return _choice(value, SWEETNESS, SWEETNESS_ALIASES)

    @field_validator("body", mode="before")
    @classmethod
    def _body(cls, value: Any) -> str | None:
        return _choice(value, BODIES, BODY_ALIASES)

    @field_validator("acidity", mode="before")
    @classmethod
    def _acidity(cls, value: Any) -> str | None:
        return _choice(value, ACIDITY, {})

    @field_validator("currency", mode="before")
    @classmethod
    def _currency(cls, value: Any) -> str | None:
        return str(value).strip().upper() or None if value is not None else None

    @field_validator("vintage", mode="before")
    @classmethod
    def _vintage(cls, value: Any) -> str | None:
        if value is None or str(value).strip() == "":
            return None
        text = str(value).strip()
        if fold(text) in {"nv", "n.v.", "non-vintage"}:
            return "NV"
        if not (text.isdigit() and 1800 <= int(text) <= 2100):
            raise ValueError(f"{text!r} is not a year or NV")
        return text

    @field_validator(
        "producer", "country", "region", "description", "sweetness", "body", mode="before"
    )
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("abv", "price", "rating", mode="before")
    @classmethod
    def _blank_number(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("rating_count", mode="before")
    @classmethod
    def _blank_count(cls, value: Any) -> Any:
        return 0 if value is None or (isinstance(value, str) and not value.strip()) else value

    def row(self) -> dict[str, Any]:
        """Column values for the `wines` table, search keys included."""
        grapes = [g for g in self.grapes if g]
        foods = [f for f in self.food_pairings if f]
        grape_keys = sorted({canonical_grape(part) for g in grapes for part in _grape_parts(g)})
        food_keys = sorted({canonical_food(f) for f in foods})
        words = [
            self.name,
            self.producer,
            self.country,
            self.region,
            *grapes,
            *grape_keys,
            self.type,
            self.sweetness,
            self.body,
            *foods,
            self.description,
        ]
        return {
            "external_id": self.id,
            "name": self.name,
            "producer": self.producer,
            "country": self.country,
            "region": self.region,
            "grapes": grapes,
            "type": self.type,
            "sweetness": self.sweetness,
            "body": self.body,
            "acidity": self.acidity,
            "abv": self.abv,
            "vintage": self.vintage,
            "price": self.price,
            "currency": self.currency if self.price is not None else None,
            "description": self.description,
            "food_pairings": foods,
            "rating_avg": self.rating,
            "rating_count": self.rating_count,
            "search_text": fold(" ".join(w for w in words if w)),
            "grape_keys": "|" + "|".join(grape_keys) + "|" if grape_keys else "",
            "food_keys": "|" + "|".join(food_keys) + "|" if food_keys else "",
            "country_key": canonical_country(self.country) if self.country else "",
            "region_key": fold(self.region) if self.region else "",
        }


def _grape_parts(grape: str) -> list[str]:
    # X-Wines writes synonyms as "Muscat/Moscato": index the whole name and each part.
    parts = [grape, *grape.split("/")] if "/" in grape else [grape]
    return [p for p in parts if p.strip()]


@dataclass(frozen=True, slots=True)
class RatingRecord:
    source: str
    source_rating_id: str
    wine_external_id: str
    rater_id: str | None
    vintage: str | None
    rating: float
    rated_at: datetime | None


@dataclass(frozen=True, slots=True)
class RowError:
    """A bad row: where it is, which field, and why."""

    path: str
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.reason}"
