"""The evaluation's dialog sets: data files (YAML), not code. Each set says when it was written,
when it was frozen (its first run) and whether work has been tuned on it since: a set tuned on
measures fit, not quality.

    name: dev
    written: "2026-11-27"
    frozen: "2026-11-27"        # null until its first run
    tuned_on: false
    dialogs:
      - id: sv-shrimp
        language: sv
        turns:
          - say: "Jag letar efter ett torrt vitt vin till räkor, under 20 euro."
            kind: request   # request, question, follow_up, off_topic, injection, courtesy,
                            # adding (bottles they have, for their cellar)
            expect: {types: [white], max_price: 20, not_sweet: true}

Only the smoke set ships with the package (`smoke.yaml` beside this file); the others live in
the repository under tests/eval/sets.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

Kind = Literal["request", "question", "follow_up", "off_topic", "injection", "courtesy", "adding"]
Pick = str  # lightest | fullest | driest | sweetest | cheapest | dearest | food:<food>


class Answer(BaseModel):
    """The fact a question asks for: some number of the reply within `numbers`, one of the
    words of `any`, or the wine of those shown before that `pick` names."""

    model_config = ConfigDict(extra="forbid")

    numbers: tuple[float, float] | None = None
    any: tuple[str, ...] = ()
    pick: Pick | None = None


class Adds(BaseModel):
    """Bottles the person says they have: the reply offers to add this many, of this vintage,
    of this catalog wine (shown among its cards), or of a wine the catalog lacks (`wine`
    null: no card, the wine as named)."""

    model_config = ConfigDict(extra="forbid")

    wine: str | None
    bottles: int = 1
    vintage: int | None = None


class Expect(BaseModel):
    """What the reply must respect, judged on the catalog rows of its cards. `types`,
    `countries`: every wine is one of these; `not_…`: none is; `grapes`: one wine at least is
    of these; `max_price` in the catalog's currency (euros); `cheaper`: every wine costs less
    than the dearest of the previous reply; `foods`: one wine at least pairs, in the catalog's
    own pairings, with one of these; `wines`: whether cards are wanted at all;
    `impossible`: nothing in the catalog meets every wish, so the reply must say what it gave
    up; `answer`: the fact a question asks for."""

    model_config = ConfigDict(extra="forbid")

    wines: bool = True
    types: tuple[str, ...] = ()
    not_types: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    not_countries: tuple[str, ...] = ()
    grapes: tuple[str, ...] = ()
    foods: tuple[str, ...] = ()
    max_price: float | None = None
    sweet: bool = False
    not_sweet: bool = False
    cheaper: bool = False
    impossible: bool = False
    answer: Answer | None = None
    from_cellar: bool = False  # every wine shown is one of the dialog's own bottles
    adds: Adds | None = None  # bottles offered to add to the cellar, not wines recommended

    @field_validator("types", "not_types", "countries", "not_countries", mode="after")
    @classmethod
    def _lower(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        # The catalog's rows name types and countries in lower case; "France" in a set means it.
        return tuple(name.lower() for name in names)

    def with_earlier(self, earlier: Expect) -> Expect:
        """What the person has stated so far: this turn's wishes over the earlier ones."""
        return self.model_copy(
            update={
                "types": (*earlier.types, *self.types),
                "countries": (*earlier.countries, *self.countries),
                "grapes": (*earlier.grapes, *self.grapes),
                "impossible": self.impossible or earlier.impossible,
            }
        )


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    say: str
    kind: Kind = "request"
    new: bool = False  # a fresh conversation (/new) starts before this turn
    expect: Expect = Field(default_factory=Expect)


class Bottle(BaseModel):
    """Bottles of a catalog wine in the dialog's person's cellar, there before the first turn."""

    model_config = ConfigDict(extra="forbid")

    wine: str  # the catalog's id
    bottles: int = Field(default=1, ge=1)
    place: str | None = None
    vintage: str | None = None


class Dialog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    language: str = "en"  # the language every reply must be written in
    cellar: list[Bottle] = Field(default_factory=list)
    turns: list[Turn]


class DialogSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    written: str
    frozen: str | None = None
    tuned_on: bool = False
    about: str = ""
    dialogs: list[Dialog]


class SetError(ValueError):
    """A set file that cannot be read; the message names the file and the field."""


SETS = Path(__file__).resolve().parents[3] / "tests" / "eval" / "sets"


def load(name_or_path: str) -> DialogSet:
    """A set by file path, or by name: the shipped smoke set, or tests/eval/sets/NAME.yaml of
    a checkout."""
    path = Path(name_or_path)
    if name_or_path == "smoke":
        text = (resources.files("sommelier.evaluation") / "smoke.yaml").read_text("utf-8")
        return _parse(text, "smoke.yaml")
    if not path.suffix:
        path = SETS / f"{name_or_path}.yaml"
    if not path.is_file():
        raise SetError(f"{path}: no such set file")
    return _parse(path.read_text("utf-8"), str(path))


def _parse(text: str, where: str) -> DialogSet:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SetError(f"{where}: not YAML: {exc}") from None
    try:
        return DialogSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise SetError(f"{where}: {field}: {first['msg']}") from None


def available() -> list[str]:
    """The names of the sets in this checkout (and the shipped smoke set)."""
    found = sorted(p.stem for p in SETS.glob("*.yaml")) if SETS.is_dir() else []
    return ["smoke", *(n for n in found if n != "smoke")]
