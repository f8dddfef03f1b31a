"""The Memory panel in Chromium with 10,000 and 100,000 memories: first list, search.

Run from the repository root in the Python 3.14 environment (Chromium as
`script/test-browser` installs it):

    python bench/panel.py                          # 10k and 100k, 5 runs each
    python bench/panel.py --memories 10000 --runs 3

For each size it builds a Home Assistant config folder as `script/develop`
does (`tests/browser/panel_browser.py`'s helpers), fills the memory
database with that many memories before Home Assistant starts (8 to 20
words each, `bench/add_rate.py`'s words, a fixed seed, the engine's
`add_many`, a few tags), starts Home Assistant, onboards the owner and
opens the panel in Chromium. Per run:

- `first list`: from opening /memory in a fresh browser context (no cache:
  Home Assistant's frontend loads too) until the first memory is on screen;
- `panel list`: within the open panel, from filtering by a tag (a fifth of
  the memories carry it) until its first page and count are on screen (the
  panel's own round trip: websocket, query, render);
- `browse`: one `memory/browse` page (50 newest) over the websocket, as
  the panel asks it, timed in this script;
- `search as you type`: from typing a word until the list shows what it
  found, the panel's 250 ms pause included.

Medians over `--runs` are printed; record them in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
import random
import statistics
import sys
import tempfile
import time
from typing import Final

import aiohttp
from playwright.async_api import async_playwright

REPO: Final = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.add_rate import WORDS  # noqa: E402
from custom_components.memory import engine  # noqa: E402
from tests.browser import panel_browser as ui  # noqa: E402

TAGS: Final = ("chores", "family", "health", "school", "garden")


async def fill(database: Path, count: int) -> None:
    """Write `count` memories into a fresh database at `database`."""
    rng = random.Random(1)
    database.parent.mkdir(parents=True, exist_ok=True)
    store = engine.MemoryStore(database, model=None)
    await store.open()
    try:
        for start in range(0, count, 1000):
            await store.add_many(
                [
                    engine.NewMemory(
                        content=" ".join(rng.choices(WORDS, k=rng.randint(8, 20)))
                        + f" {i}",
                        tags=(TAGS[i % len(TAGS)],),
                        source=engine.Source(origin=engine.Origin.ACTION),
                    )
                    for i in range(start, min(start + 1000, count))
                ]
            )
    finally:
        await store.close()


async def measure(count: int, runs: int) -> dict[str, list[float]]:
    """Return each run's timings (ms) for one database size."""
    timings: dict[str, list[float]] = {
        "first list": [],
        "panel list": [],
        "browse": [],
        "search as you type": [],
    }
    with tempfile.TemporaryDirectory(prefix="panel-bench-") as folder:
        port = ui.free_port()
        # The config folder home_assistant() prepares is folder/config.
        await fill(Path(folder) / "config" / "memory" / "memory.db", count)
        async with (
            ui.ollama_server() as peer,
            ui.home_assistant(Path(folder), port, peer.url) as base,
            aiohttp.ClientSession() as session,
            async_playwright() as playwright,
        ):
            tokens = await ui.owner_tokens(session, base)
            api = ui.Api(session, base, tokens["access_token"])
            while await api.state() != "RUNNING":  # noqa: ASYNC110 - a remote server
                await asyncio.sleep(0.5)
            browser = await playwright.chromium.launch(
                executable_path=ui.CHROMIUM, args=["--no-sandbox"]
            )
            viewport = {"width": 1280, "height": 800}
            # A first, unmeasured open: Home Assistant builds its caches.
            warm = await ui.open_panel(
                browser, base, tokens, ui.FIRST_WAIT_MS, viewport=viewport
            )
            await warm.locator("li.row").first.wait_for(timeout=ui.FIRST_WAIT_MS)
            await warm.context.close()
            for run in range(runs):
                started = time.perf_counter()
                page = await ui.open_panel(browser, base, tokens, viewport=viewport)
                await page.locator("li.row").first.wait_for(timeout=ui.WAIT_MS)
                timings["first list"].append((time.perf_counter() - started) * 1000)

                # A fifth of them carry the tag "chores".
                tag = page.get_by_label("Tag", exact=True)
                await tag.fill("chores")
                started = time.perf_counter()
                await tag.press("Enter")
                await page.get_by_text(f"of {count // len(TAGS)}").wait_for(
                    timeout=ui.WAIT_MS
                )
                timings["panel list"].append((time.perf_counter() - started) * 1000)

                started = time.perf_counter()
                await api.ws(type="memory/browse", limit=50)
                timings["browse"].append((time.perf_counter() - started) * 1000)

                word = ("dentist", "boiler", "swimming", "garage", "birthday")[run % 5]
                search = page.get_by_role("searchbox", name="Search memories")
                started = time.perf_counter()
                await search.fill(word)
                await page.get_by_text(f"of {count // len(TAGS)}").wait_for(
                    state="hidden", timeout=ui.WAIT_MS
                )
                await page.locator("li.row .content", has_text=word).first.wait_for(
                    timeout=ui.WAIT_MS
                )
                timings["search as you type"].append(
                    (time.perf_counter() - started) * 1000
                )
                await page.context.close()
            await browser.close()
    return timings


def main() -> int:
    """Print each size's medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for count in args.memories:
        timings = asyncio.run(measure(count, args.runs))
        medians = ", ".join(
            f"{name} {statistics.median(values):.0f} ms"
            f" (runs {', '.join(f'{v:.0f}' for v in values)})"
            for name, values in timings.items()
        )
        print(f"panel: {count} memories: {medians}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
