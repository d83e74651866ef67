"""CPU seconds each reader of a model's text takes on hostile shapes at 10k, 100k, 200k and 1M
characters: the curve tests/unit/test_parsing_linear.py bounds. A line is flagged when 200k
characters take more than 0.5 s (issue's goal) or tenfold text more than 15-fold time.

    .venv/bin/python bench/parsing_bench.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.hostile import READERS, SHAPES, cpu_seconds

SIZES = (10_000, 100_000, 200_000, 1_000_000)


def main() -> None:
    print(f"{'reader':<22}{'shape':<16}" + "".join(f"{n:>11,}" for n in SIZES) + "  1M/100k")
    worst = 0.0
    for reader, read in READERS.items():
        for shape, make in SHAPES.items():
            times = [cpu_seconds(read, make(n), repeats=3 if n < 1_000_000 else 1) for n in SIZES]
            growth = times[-1] / max(times[1], 1e-4)
            worst = max(worst, times[2])
            flag = "  !" if times[2] > 0.5 or growth > 15 else ""
            cells = "".join(f"{t:>11.4f}" for t in times)
            print(f"{reader:<22}{shape:<16}{cells}{growth:>9.1f}{flag}")
    print(f"\nslowest at 200k characters: {worst:.3f} s of CPU")


if __name__ == "__main__":
    main()
