"""Photo abuse, in memory: the peak resident memory a process adds while six hostile photos
arrive at once (issue 46: a 33 KB PNG of 144 megapixels cost +400 MB, six at once +632 MB),
and while six honest camera-size photos do. Each kind runs in a fresh process, so one peak
does not hide the next; the figure is its highest RSS while they are read (sampled every
5 ms) minus its RSS before.

    .venv/bin/python bench/photo_memory_bench.py
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from common import report  # noqa: E402

KINDS = {
    "pixel bombs (PNG, 12000×12000, a few KB each)": "bomb",
    "corrupt files (a label cut after 300 bytes)": "corrupt",
    "camera photos (JPEG, 6000×4000)": "camera",
}


def _image(kind: str) -> bytes:
    from PIL import Image

    from tests.support.label_images import render_label

    buffer = io.BytesIO()
    if kind == "bomb":
        Image.new("L", (12_000, 12_000)).save(buffer, "PNG", optimize=True)
    elif kind == "corrupt":
        return render_label(["Château Musar"], seed=3)[:300]
    else:
        label = Image.open(io.BytesIO(render_label(["Château Musar", "Bekaa Valley"], seed=2)))
        label.convert("RGB").resize((6000, 4000)).save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


async def _six_at_once(path: str) -> dict[str, float]:
    from sommelier.app import App
    from sommelier.catalog.starter import load_starter_catalog_if_empty
    from sommelier.vision import ocr
    from sommelier.vision.photos import PhotoReader

    image = await asyncio.to_thread(Path(path).read_bytes)  # made by the parent: no peak here
    images = [image] * 6
    app = App.build(_settings())
    await app.prepare()
    await load_starter_catalog_if_empty(app.sessions)
    reader = PhotoReader(app.sessions)
    from tests.support.label_images import render_label

    ocr.read_lines(render_label(["Warm up"], seed=1))  # the OCR model, loaded before
    before = _rss_mb()
    with Sampler() as sampler:
        results = await asyncio.gather(
            *(reader.recognise(i) for i in images), return_exceptions=True
        )
    await app.aclose()
    refused = sum(isinstance(r, ocr.UnreadableImage) for r in results)
    failed = sum(isinstance(r, BaseException) for r in results) - refused
    return {"added_mb": sampler.peak - before, "refused": refused, "failed": failed}


class Sampler:
    """The process's RSS every few milliseconds while the photos are read: their own peak (the
    kernel's lifetime peak would include the OCR model's loading)."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._done.wait(0.005):
            self.peak = max(self.peak, _rss_mb())
        self.peak = max(self.peak, _rss_mb())


def _settings():  # type: ignore[no-untyped-def]
    from sommelier.config import Settings

    folder = tempfile.mkdtemp(prefix="photo-bench-")
    return Settings(database_url=f"sqlite+aiosqlite:///{folder}/bench.db")


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--image":
        print(json.dumps(asyncio.run(_six_at_once(sys.argv[2]))))
        return
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="photo-bench-"))
    for title, kind in KINDS.items():
        image = folder / kind
        image.write_bytes(_image(kind))
        out = subprocess.run(
            [sys.executable, __file__, "--image", str(image)],
            capture_output=True, text=True, check=True, cwd=ROOT,
        )  # fmt: skip
        found = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(
            (
                f"6 at once: {title}",
                f"+{found['added_mb']:.0f} MB peak, {found['refused']} refused, "
                f"{found['failed']} failed",
            )
        )
    report(
        "Photos, six at once: what a process adds (RSS sampled every 5 ms, over its RSS before)",
        rows,
    )


if __name__ == "__main__":
    main()
