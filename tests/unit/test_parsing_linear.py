"""Reading a model's text takes time in proportion to its length, whatever its shape: long runs
of spaces, backticks, newlines, brackets (issue: a fence regex took 7.6 s on 40,000 spaces, and
the delimited parser 23.5 s on 200k characters fed in chunks). The bound is on the growth from
100k to 1M characters, never on a wall time: tenfold the text may cost at most 30-fold the
time (a quadratic reader costs 100-fold), on a machine as busy as it likes."""

import pytest

from tests.support.hostile import READERS, SHAPES, cpu_seconds

FLOOR = 0.002  # seconds: below it a measurement is noise, so it counts as this much
GROWTH = 30.0


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_reading_grows_linearly(reader: str, shape: str) -> None:
    read, make = READERS[reader], SHAPES[shape]
    small = max(cpu_seconds(read, make(100_000), repeats=3), FLOOR)
    large = cpu_seconds(read, make(1_000_000))
    assert large / small < GROWTH, f"{reader} on {shape}: {small:.4f} s → {large:.4f} s"
