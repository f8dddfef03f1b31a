"""The Memory panel in a real browser, against a real Home Assistant.

Run by `script/test-browser` (itself run by `script/test`):

    python tests/browser/panel_browser.py [--screenshots docs/images]

It starts Home Assistant as `script/develop` does (a fresh config folder,
seeded by `script/dev_config/seed.py`, Assist Memory on keyword search) on
a free port, onboards the owner over REST, adds a second person (Anna, not
an admin) and a person with no login (Ben), then drives Debian's Chromium
with Playwright:

- as the owner: the panel is in the sidebar; it lists the memories (each
  with its owner); a search as you type finds one, a paraphrase too; the
  owner and tag filters find one; a memory opens; forget, find it among the
  forgotten, restore; a memory added meanwhile appears without reload; add
  one in the panel, reword it and see the old wording as its history, find
  it by other words and by its tag; tick three memories, let writes from
  elsewhere (added, forgotten) update the list live: the ticks stay, the one
  forgotten elsewhere is unselected with a notice, and the selection bar
  forgets exactly the ticked ones; rows loaded with *Show more* stay
  through a live update;
- a conversation: the owner talks to Home Assistant's own `ollama` agent
  (on a scripted Ollama server, `tests/ollama_server.py`, that also answers
  as the AI Task entity); in the Conversations view it waits for digestion;
  "Digest now" digests it, the memory it gave opens, and its source opens
  the conversation again at the message it came from;
- import: paste two lines in the Import dialog, the preview counts one new
  and one already there, the import stores the new one, which the origin
  filter finds;
- the README's quick start, step 3: the Ollama agent's ⚙ in Settings →
  Devices & services offers "Control Home Assistant" with Assist and
  Memory ticked;
- as Anna, on a browser set to German (the panel speaks German): the
  household's and her own memories, never Ben's; the owner's conversation
  is not among hers.

Timings (first list, search as you type) are printed, not asserted, and
the bundle's size. It opens the panel at desktop and phone width, light and
dark (at phone width its menu button opens Home Assistant's sidebar), and
with `--screenshots DIR` keeps those screenshots there. Exits non-zero on
the first failed check.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
import contextlib
import json
import os
from pathlib import Path
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Final

import aiohttp
from playwright.async_api import (
    Browser,
    Error as PlaywrightError,
    Page,
    async_playwright,
    expect,
)

REPO: Final = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.ollama_server import OllamaPeer  # noqa: E402

CHROMIUM: Final = os.environ.get("CHROMIUM", "/usr/bin/chromium")
START_TIMEOUT: Final = 300.0
WAIT_MS: Final = 20_000
# The first page of a fresh instance can wait on Home Assistant installing
# and setting up the rest of its integrations.
FIRST_WAIT_MS: Final = 180_000
OWNER: Final = ("owner", "Owner Person", "correct horse battery")
ANNA: Final = ("anna", "Anna", "anna's long password")


GRANDMA: Final = "Grandma visits us on the first weekend of May"
GRANDMA_MEMORY: Final = "Grandma visits on the first weekend of May"
_LINE: Final = re.compile(r"^\[(\d+)\] ([^:]+): (.*)$", re.MULTILINE)


def ai_task_answer(request: dict[str, Any]) -> str | None:
    """Answer an AI Task call as an LLM would: by the shape its `format` asks for.

    Digestion's extraction: one memory citing the first thing a person said
    (its message id and speaker read from the transcript, as an LLM reads
    them); a profile: a line; anything else (a chat turn): None ("OK.").
    """
    shape = request.get("format")
    if not isinstance(shape, dict):
        return None
    fields = shape.get("properties", {})
    said = "\n".join(str(message.get("content", "")) for message in request["messages"])
    if "memories" in fields:
        lines = [
            line for line in _LINE.findall(said) if not line[1].startswith("assistant")
        ]
        if not lines:
            return json.dumps({"memories": [], "summary": "Nothing to keep."})
        message_id, speaker, _text = lines[0]
        return json.dumps(
            {
                "memories": [
                    {
                        "content": GRANDMA_MEMORY,
                        "type": "event",
                        "about": speaker.strip(),
                        "confidence": 0.9,
                        "message_id": int(message_id),
                        "topic": "grandma visit",
                        "replaces": [],
                    }
                ],
                "summary": "The owner said when Grandma visits.",
            }
        )
    if "profile" in fields:
        return json.dumps({"profile": "A household that plans family visits."})
    if "decisions" in fields:
        return json.dumps({"decisions": []})
    return None


def free_port() -> int:
    """Return a port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare(folder: Path, port: int, ollama: str) -> Path:
    """Make the config folder as script/develop does; return it."""
    config = folder / "config"
    config.mkdir(exist_ok=True)  # bench/panel.py fills the database first
    shutil.copy(REPO / "script" / "dev_config" / "configuration.yaml", config)
    if not (config / "custom_components").exists():  # a start again, on another port
        (config / "custom_components").symlink_to(REPO / "custom_components")
    subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [
            sys.executable,
            str(REPO / "script/dev_config/seed.py"),
            str(config),
            "--port",
            str(port),
            "--ollama",
            ollama,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return config


@contextlib.asynccontextmanager
async def ollama_server() -> AsyncIterator[OllamaPeer]:
    """Run the scripted Ollama server, answering AI Task calls (`ai_task_answer`)."""
    peer = OllamaPeer()
    peer.respond = ai_task_answer
    await peer.start()
    try:
        yield peer
    finally:
        await peer.stop()


class StartError(RuntimeError):
    """Home Assistant exited or did not answer; the message ends with its log's tail."""

    def __init__(self, log: Path) -> None:
        """Name the log and quote its last lines."""
        tail = log.read_text(errors="replace").splitlines()[-40:]
        super().__init__(
            f"Home Assistant did not start (log {log}):\n" + "\n".join(tail)
        )
        self.port_taken = "address already in use" in "\n".join(tail).lower()


async def _started(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """Start Home Assistant on `port`; return it once its API answers."""
    # Home Assistant reads its CA bundle at import, from REQUESTS_CA_BUNDLE
    # when set. Here that is the machine's bundle, which ../shared/py314/run
    # copies into its root anew at every call: another test starting beside
    # this one can truncate it under Home Assistant's read (an SSLError, and
    # no start). The bundle certifi ships is never rewritten; nothing here
    # speaks TLS.
    env = {
        key: value for key, value in os.environ.items() if key != "REQUESTS_CA_BUNDLE"
    }
    with log.open("w") as out:
        process = subprocess.Popen(  # noqa: S603, ASYNC220
            [sys.executable, "-m", "homeassistant", "--config", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**env, "SETUP_PORT": str(port)},
        )
    deadline = time.monotonic() + START_TIMEOUT
    async with aiohttp.ClientSession() as session:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                url = f"http://127.0.0.1:{port}/api/onboarding"
                async with session.get(url) as response:
                    if response.status == 200:
                        return process
            if process.poll() is not None or time.monotonic() > deadline:
                _stop(process)
                raise StartError(log)
            await asyncio.sleep(1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


async def _start(
    folder: Path, port: int | None, ollama: str
) -> tuple[subprocess.Popen[bytes], int]:
    """Prepare the config folder and start Home Assistant; return it and its port."""
    attempt = 1
    while True:
        chosen = port or free_port()
        config = await asyncio.to_thread(prepare, folder, chosen, ollama)
        try:
            return await _started(config, chosen, folder / "home-assistant.log"), chosen
        except StartError as failed:
            if port is not None or not failed.port_taken or attempt == 3:
                raise
            print(f"panel_browser: port {chosen} was taken; another")  # noqa: T201
            attempt += 1


@contextlib.asynccontextmanager
async def home_assistant(
    folder: Path, port: int | None, ollama: str
) -> AsyncIterator[str]:
    """Start Home Assistant as script/develop does; yield its base URL.

    With no `port`, a free one; should another process take it between the
    look and Home Assistant's bind (the machine runs tests side by side),
    again on another, up to three times. Any other failed start is an
    error that quotes Home Assistant's log.
    """
    process, chosen = await _start(folder, port, ollama)
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        _stop(process)


async def owner_tokens(session: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    """Onboard the owner; return the tokens the frontend keeps."""
    username, name, password = OWNER
    async with session.post(
        f"{base}/api/onboarding/users",
        json={
            "client_id": f"{base}/",
            "name": name,
            "username": username,
            "password": password,
            "language": "en",
        },
    ) as response:
        code = (await response.json())["auth_code"]
    tokens = await trade(session, base, code)
    # The last step a person would click through (script/develop's seed
    # marked the location and analytics steps done).
    async with session.post(
        f"{base}/api/onboarding/integration",
        json={"client_id": f"{base}/", "redirect_uri": f"{base}/"},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    ) as response:
        assert response.status == 200, await response.text()
    return tokens


async def trade(session: aiohttp.ClientSession, base: str, code: str) -> dict[str, Any]:
    """Trade an authorization code for tokens."""
    async with session.post(
        f"{base}/auth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": f"{base}/",
        },
    ) as response:
        tokens: dict[str, Any] = await response.json()
    return tokens


async def login(
    session: aiohttp.ClientSession, base: str, user: tuple[str, str, str]
) -> dict[str, Any]:
    """Log a user in through the login flow, as the login page does."""
    username, _name, password = user
    async with session.post(
        f"{base}/auth/login_flow",
        json={
            "client_id": f"{base}/",
            "handler": ["homeassistant", None],
            "redirect_uri": f"{base}/",
        },
    ) as response:
        flow = await response.json()
    async with session.post(
        f"{base}/auth/login_flow/{flow['flow_id']}",
        json={"client_id": f"{base}/", "username": username, "password": password},
    ) as response:
        result = await response.json()
    return await trade(session, base, result["result"])


class Api:
    """Home Assistant's REST and websocket APIs as the owner."""

    def __init__(self, session: aiohttp.ClientSession, base: str, token: str) -> None:
        """Talk to `base` with the owner's access token."""
        self.session, self.base, self.token = session, base, token

    async def ws(self, **message: Any) -> Any:
        """Send one websocket command on a connection of its own; return its result.

        A connection per command: one kept open between commands is not read
        while the browser works, so it cannot answer Home Assistant's
        heartbeat, and a slow machine sees it closed under it.
        """
        async with self.session.ws_connect(f"{self.base}/api/websocket") as socket:
            await socket.receive_json()
            await socket.send_json({"type": "auth", "access_token": self.token})
            assert (await socket.receive_json())["type"] == "auth_ok"
            await socket.send_json({"id": 1, **message})
            while True:
                reply = await socket.receive_json()
                if reply.get("id") == 1 and reply["type"] == "result":
                    assert reply["success"], reply
                    return reply["result"]

    async def ollama_entities(self) -> tuple[str, str]:
        """Return the `ollama` agent's and AI Task's entity ids; make the AI Task preferred."""
        entities = await self.ws(type="config/entity_registry/list")
        found = {
            entity["entity_id"].split(".")[0]: entity["entity_id"]
            for entity in entities
            if entity["platform"] == "ollama"
        }
        await self.ws(
            type="ai_task/preferences/set", gen_data_entity_id=found["ai_task"]
        )
        return found["conversation"], found["ai_task"]

    async def state(self) -> str:
        """Return Home Assistant's run state ("RUNNING" once started)."""
        async with self.session.get(
            f"{self.base}/api/config",
            headers={"Authorization": f"Bearer {self.token}"},
        ) as response:
            return str((await response.json())["state"])

    async def add(self, content: str, **data: Any) -> int:
        """Add a memory with `memory.add`; return its id."""
        async with self.session.post(
            f"{self.base}/api/services/memory/add?return_response",
            json={"content": content, **data},
            headers={"Authorization": f"Bearer {self.token}"},
        ) as response:
            body = await response.json()
        assert response.status == 200 and "service_response" in body, body
        return int(body["service_response"]["id"])

    async def search_id(self, content: str) -> int:
        """Return the id of the memory with exactly this text (memory/browse)."""
        found = await self.ws(type="memory/browse", query=content)
        return int(next(m["id"] for m in found["memories"] if m["content"] == content))


async def open_panel(
    browser: Browser,
    base: str,
    tokens: dict[str, Any],
    wait_ms: int = WAIT_MS,
    **context: Any,
) -> Page:
    """Open /memory logged in with `tokens` (kept where the frontend keeps them)."""
    page = await (await browser.new_context(**context)).new_page()
    stored = {
        "hassUrl": base,
        "clientId": f"{base}/",
        "expires": int(time.time() * 1000) + tokens["expires_in"] * 1000,
        "refresh_token": tokens.get("refresh_token"),
        "access_token": tokens["access_token"],
        "token_type": "Bearer",
        "expires_in": tokens["expires_in"],
    }
    await page.add_init_script(
        f"window.localStorage.setItem('hassTokens', {json.dumps(json.dumps(stored))});"
    )
    await page.goto(f"{base}/memory")
    try:
        await page.locator("memory-panel").wait_for(timeout=wait_ms)
    except PlaywrightError:
        # What the browser shows instead, for the log.
        print(f"panel_browser: no panel at {page.url}: {await page.title()!r}")  # noqa: T201
        print((await page.content())[:2000])  # noqa: T201
        raise
    return page


async def check(args: argparse.Namespace) -> dict[str, float]:
    """Run every check; return the timings."""
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        async with (
            ollama_server() as peer,
            home_assistant(Path(folder), None, peer.url) as base,
            aiohttp.ClientSession() as session,
            async_playwright() as playwright,
        ):
            tokens = await owner_tokens(session, base)
            api = Api(session, base, tokens["access_token"])
            # Anna logs in and has a person; Ben is a person with no login.
            anna = await api.ws(
                type="config/auth/create",
                name=ANNA[1],
                group_ids=["system-users"],
                local_only=False,
            )
            await api.ws(
                type="config/auth_provider/homeassistant/create",
                user_id=anna["user"]["id"],
                username=ANNA[0],
                password=ANNA[2],
            )
            await api.ws(type="person/create", name="Anna", user_id=anna["user"]["id"])
            await api.ws(type="person/create", name="Ben")
            # Home Assistant has set up everything (a fresh instance installs
            # the requirements of its integrations first), the panel is there.
            while await api.state() != "RUNNING":  # noqa: ASYNC110 - a remote server
                await asyncio.sleep(0.5)
            assert "memory" in await api.ws(type="get_panels")
            agent, _ai_task = await api.ollama_entities()
            bins = await api.add("The bins go out on Thursday evening", tags=["chores"])
            await api.add("Anna's running shoes are size 39", person="person.anna")
            await api.add("Ben is planning a surprise party", person="person.ben")

            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox"]
            )
            page = await owner_checks(browser, base, tokens, api, bins, timings)
            await api.ws(
                type="conversation/process", text=GRANDMA, agent_id=agent, language="en"
            )
            await conversation_checks(page, args.screenshots or Path(folder) / "shots")
            # Desktop and phone width, light and dark; the phone's menu button.
            await shoot(
                browser, base, tokens, args.screenshots or Path(folder) / "shots", page
            )
            await agent_setting_checks(
                browser, base, tokens, args.screenshots or Path(folder) / "shots"
            )
            await import_checks(browser, base, tokens)
            # Anna: the household's and her own, never Ben's.
            anna_tokens = await login(session, base, ANNA)
            # Anna's phone is set to German: so is the panel.
            hers = await open_panel(browser, base, anna_tokens, locale="de-DE")
            await hers.get_by_role("heading", name="Gedächtnis").wait_for(
                timeout=WAIT_MS
            )
            await hers.get_by_text("Anna's running shoes are size 39").wait_for(
                timeout=WAIT_MS
            )
            await hers.get_by_text("The bins go out on Thursday evening").wait_for(
                timeout=WAIT_MS
            )
            assert (
                await hers.get_by_text("Ben is planning a surprise party").count() == 0
            )
            await hers.get_by_role("searchbox", name="Erinnerungen durchsuchen").fill(
                "surprise party"
            )
            await hers.get_by_text("Anna's running shoes are size 39").wait_for(
                state="hidden", timeout=WAIT_MS
            )
            assert (
                await hers.get_by_text("Ben is planning a surprise party").count() == 0
            )
            # The owner's conversation is not among hers.
            await hers.get_by_role("tab", name="Gespräche").click()
            await hers.get_by_text("Noch keine Gespräche aufgezeichnet.").wait_for(
                timeout=WAIT_MS
            )
            assert await hers.get_by_text(GRANDMA).count() == 0
            await browser.close()
    return timings


async def import_checks(browser: Browser, base: str, tokens: dict[str, Any]) -> None:
    """Import: paste two lines, preview (one new, one already here), import."""
    page = await open_panel(
        browser, base, tokens, viewport={"width": 1280, "height": 800}
    )
    await page.get_by_text("The bins go out on Thursday evening").wait_for(
        timeout=WAIT_MS
    )
    await page.get_by_role("button", name="Import", exact=True).click()
    dialog = page.get_by_role("dialog", name="Import")
    await dialog.get_by_label("Paste memories").fill(
        "The bins go out on Thursday evening\nThe piano tuner comes in May"
    )
    await dialog.get_by_role("button", name="Preview").click()
    plan = dialog.locator("dl.import-plan")
    await plan.wait_for(timeout=WAIT_MS)
    counts = " ".join((await plan.inner_text()).split())
    assert "New 1" in counts, counts
    assert "Already here 1" in counts, counts
    await dialog.get_by_role("button", name="Import", exact=True).click()
    await dialog.get_by_text("Imported 1 memories; 1 were already here.").wait_for(
        timeout=WAIT_MS
    )
    await dialog.get_by_role("button", name="Close").last.click()
    # Imported memories are found by their origin.
    await page.get_by_label("Came from").select_option("import")
    await lists(
        page, "The piano tuner comes in May", "The bins go out on Thursday evening"
    )
    await page.context.close()


async def lists(page: Page, shown: str, hidden: str) -> None:
    """Wait until the list shows `shown` and no longer `hidden`."""
    await page.get_by_text(hidden).wait_for(state="hidden", timeout=WAIT_MS)
    await page.get_by_text(shown).wait_for(timeout=WAIT_MS)


async def filter_by_tag(page: Page, tag: str) -> None:
    """Type a tag into the tag filter ("" clears it) and apply it."""
    field = page.get_by_label("Tag", exact=True)
    await field.fill(tag)
    await field.press("Enter")


async def search_checks(page: Page, timings: dict[str, float]) -> None:
    """Search as you type, a paraphrase, a tag, an owner."""
    # Search as you type.
    search = page.get_by_role("searchbox", name="Search memories")
    started = time.perf_counter()
    await search.fill("surprise")
    await page.get_by_text("The bins go out on Thursday evening").wait_for(
        state="hidden", timeout=WAIT_MS
    )
    timings["search as you type (after a 250 ms pause)"] = (
        time.perf_counter() - started
    ) * 1000
    await page.get_by_text("Ben is planning a surprise party").wait_for(timeout=WAIT_MS)
    await search.fill("")
    # A paraphrase: other words for the same thing.
    await search.fill("when is bin collection")
    await lists(
        page,
        shown="The bins go out on Thursday evening",
        hidden="Ben is planning a surprise party",
    )
    await search.fill("")
    # A tag.
    await filter_by_tag(page, "chores")
    await lists(
        page,
        shown="The bins go out on Thursday evening",
        hidden="Ben is planning a surprise party",
    )
    await filter_by_tag(page, "")
    # A filter: Anna's only.
    await page.get_by_label("Whose").select_option("person.anna")
    await lists(
        page,
        shown="Anna's running shoes are size 39",
        hidden="The bins go out on Thursday evening",
    )
    await page.get_by_label("Whose").select_option("")


async def owner_checks(
    browser: Browser,
    base: str,
    tokens: dict[str, Any],
    api: Api,
    bins: int,
    timings: dict[str, float],
) -> Page:
    """List, search, filter, open, forget, restore, live, add, reword: as the owner."""
    started = time.perf_counter()
    page = await open_panel(
        browser, base, tokens, FIRST_WAIT_MS, viewport={"width": 1280, "height": 800}
    )
    await page.get_by_text("The bins go out on Thursday evening").wait_for(
        timeout=WAIT_MS
    )
    timings["first list (3 memories; the first page load)"] = (
        time.perf_counter() - started
    ) * 1000
    # The sidebar names the panel.
    await page.locator('a[href="/memory"]').first.wait_for(timeout=WAIT_MS)
    for text in (
        "Anna's running shoes are size 39",
        "Ben is planning a surprise party",
    ):
        await page.get_by_text(text).wait_for(timeout=WAIT_MS)
    await search_checks(page, timings)
    # Open one, forget it, find it among the forgotten, restore it.
    await page.get_by_role(
        "button", name=f"#{bins}: The bins go out on Thursday evening"
    ).click()
    await page.get_by_role("dialog", name=f"#{bins}").wait_for(timeout=WAIT_MS)
    await page.get_by_role("button", name="Forget").click()
    await page.get_by_role("button", name="Restore").wait_for(timeout=WAIT_MS)
    await page.get_by_role("button", name="Close").click()
    await page.get_by_label("Status").select_option("archived")
    await page.get_by_text("The bins go out on Thursday evening").wait_for(
        timeout=WAIT_MS
    )
    await page.get_by_role(
        "button", name=f"#{bins}: The bins go out on Thursday evening"
    ).click()
    await page.get_by_role("button", name="Restore").click()
    await page.get_by_role("button", name="Forget").wait_for(timeout=WAIT_MS)
    await page.get_by_role("button", name="Close").click()
    await page.get_by_label("Status").select_option("active")
    # Live: a memory added elsewhere appears without a reload.
    await api.add("The window cleaner comes on Fridays")
    await page.get_by_text("The window cleaner comes on Fridays").wait_for(
        timeout=WAIT_MS
    )
    # The overview counts what the owner may see.
    await page.get_by_text("Overview:").click()
    await page.get_by_text("Profiles").wait_for(timeout=WAIT_MS)
    await page.get_by_text("conversations waiting for digestion").wait_for(
        timeout=WAIT_MS
    )
    # Add one by hand, then reword it: the old wording stays as its history.
    await page.get_by_role("button", name="Add", exact=True).click()
    adding = page.get_by_role("dialog", name="Add")
    await adding.get_by_label("Text").fill("The guest room stays at 19 degrees")
    await adding.get_by_label("Tags").fill("heating, guests")
    await adding.get_by_role("button", name="Save").click()
    details = page.locator("section.detail")
    await details.get_by_text("heating, guests").wait_for(timeout=WAIT_MS)
    await details.get_by_role("button", name="Edit").click()
    await details.get_by_label("Text").fill("The guest room stays at 20 degrees")
    await details.get_by_role("button", name="Save").click()
    await details.get_by_text("It replaced").wait_for(timeout=WAIT_MS)
    await details.get_by_text("The guest room stays at 19 degrees").wait_for(
        timeout=WAIT_MS
    )
    await page.get_by_role("button", name="Close").click()
    await page.get_by_text("The guest room stays at 20 degrees").wait_for(
        timeout=WAIT_MS
    )
    # The memory just added: found by other words, and by its tag.
    search = page.get_by_role("searchbox", name="Search memories")
    await search.fill("how warm is the guest bedroom")
    await lists(
        page,
        shown="The guest room stays at 20 degrees",
        hidden="The bins go out on Thursday evening",
    )
    await search.fill("")
    await filter_by_tag(page, "heating")
    await lists(
        page,
        shown="The guest room stays at 20 degrees",
        hidden="The bins go out on Thursday evening",
    )
    await filter_by_tag(page, "")
    await page.get_by_text("The bins go out on Thursday evening").wait_for(
        timeout=WAIT_MS
    )
    await selection_checks(page, api)
    await depth_checks(page, api)
    return page


async def depth_checks(page: Page, api: Api) -> None:
    """Rows loaded with *Show more* stay through a live update.

    A live update used to fall back to the first 50: the rows below, and
    the place a person had scrolled to, were gone.
    """
    fillers = [
        await api.add(f"Filler note {number} for the paging check")
        for number in range(55)
    ]
    oldest = page.get_by_text("Filler note 0 for the paging check", exact=True)
    await page.get_by_role("button", name="Show more").click()
    await oldest.scroll_into_view_if_needed(timeout=WAIT_MS)
    count = page.locator("memory-panel p.count[aria-live]")
    shown = (await count.inner_text()).strip()
    loaded, total = (int(part) for part in shown.split(" of "))
    assert loaded == total > 50, shown
    await api.add("The piano tuner comes in March")
    await page.get_by_text("The piano tuner comes in March").wait_for(timeout=WAIT_MS)
    await expect(count).to_have_text(f"{total + 1} of {total + 1}", timeout=WAIT_MS)
    assert await oldest.is_visible()
    await api.ws(type="memory/forget", memory_ids=fillers, purge=True)
    await oldest.wait_for(state="detached", timeout=WAIT_MS)


async def selection_checks(page: Page, api: Api) -> None:
    """Tick memories; writes from elsewhere keep the ticks; forget exactly those.

    A live update (another device adds, forgets, rewords) reads the list
    again: the ticked memories stay ticked, one forgotten elsewhere is
    unselected with a notice, and the selection bar forgets exactly the
    ticked ones.
    """
    ticked = {
        text: await api.search_id(text)
        for text in (
            "The window cleaner comes on Fridays",
            "The guest room stays at 20 degrees",
            "Anna's running shoes are size 39",
        )
    }
    for memory_id in ticked.values():
        box = page.get_by_label(f"Select memory #{memory_id}")
        await box.check()
        assert await box.is_checked()
    toolbar = page.get_by_role("toolbar")
    await toolbar.get_by_text("3 selected").wait_for(timeout=WAIT_MS)
    # Writes from elsewhere, each a live update of the open list.
    elsewhere = [
        "The dishwasher tablets are under the sink",
        "The spare key is with the neighbours at number 12",
    ]
    for text in elsewhere:
        await api.add(text)
        await page.get_by_text(text).wait_for(timeout=WAIT_MS)
    for memory_id in ticked.values():
        assert await page.get_by_label(f"Select memory #{memory_id}").is_checked()
    await toolbar.get_by_text("3 selected").wait_for(timeout=WAIT_MS)
    # One of the ticked is forgotten elsewhere: it leaves the list and the
    # selection, and the panel says so.
    shoes = ticked.pop("Anna's running shoes are size 39")
    await api.ws(type="memory/forget", memory_ids=[shoes])
    await (
        page.get_by_role("status").get_by_text("Unselected 1").wait_for(timeout=WAIT_MS)
    )
    await toolbar.get_by_text("2 selected").wait_for(timeout=WAIT_MS)
    await api.ws(type="memory/restore", memory_ids=[shoes])
    await page.get_by_text("Anna's running shoes are size 39").wait_for(timeout=WAIT_MS)
    assert not await page.get_by_label(f"Select memory #{shoes}").is_checked()
    # Forget the ticked: exactly those leave; what was written elsewhere stays.
    await toolbar.get_by_role("button", name="Forget").click()
    for text in ticked:
        await page.get_by_text(text).wait_for(state="hidden", timeout=WAIT_MS)
    for text in [*elsewhere, "Anna's running shoes are size 39"]:
        await page.get_by_text(text).wait_for(timeout=WAIT_MS)
    active = await api.ws(type="memory/browse", limit=50)
    listed = {memory["id"] for memory in active["memories"]}
    assert listed.isdisjoint(ticked.values()), listed
    assert shoes in listed
    archived = await api.ws(type="memory/browse", status="archived", limit=50)
    assert {memory["id"] for memory in archived["memories"]} == set(ticked.values())


async def conversation_checks(page: Page, folder: Path) -> None:
    """Digest a conversation now; open what it gave; open its source at the message."""
    await page.get_by_role("tab", name="Conversations").click()
    row = page.get_by_role("button", name=re.compile(re.escape(GRANDMA)))
    await row.wait_for(timeout=WAIT_MS)
    await row.get_by_text("Waiting").wait_for(timeout=WAIT_MS)
    await row.click()
    dialog = page.get_by_role("dialog", name="Conversation")
    await dialog.get_by_text(GRANDMA).wait_for(timeout=WAIT_MS)
    await dialog.get_by_role("button", name="Digest now").click()
    gave = dialog.get_by_role("button", name=re.compile(GRANDMA_MEMORY))
    await gave.wait_for(timeout=WAIT_MS)
    await dialog.get_by_text("Digested").first.wait_for(timeout=WAIT_MS)
    # The memory it gave; from there, back to the message it came from.
    await gave.click()
    memory = page.locator("section.detail")
    await memory.get_by_text(GRANDMA_MEMORY).first.wait_for(timeout=WAIT_MS)
    await memory.get_by_role("button", name=re.compile("open the conversation")).click()
    at = page.locator(".message.at")
    await at.get_by_text(GRANDMA).wait_for(timeout=WAIT_MS)
    assert await at.get_attribute("aria-current") == "true"
    folder.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(folder / "panel-conversation-desktop-light.png"))
    await page.get_by_role("button", name="Close").click()
    await page.get_by_role("tab", name="Memories").click()


async def agent_setting_checks(
    browser: Browser, base: str, tokens: dict[str, Any], folder: Path
) -> None:
    """Check the README's quick start, step 3: where an agent gets the Memory API.

    Settings → Devices & services → Ollama → the conversation agent's ⚙
    ("Reconfigure conversation agent") → "Control Home Assistant": Assist and
    Memory, ticked (script/dev_config/seed.py ticked them, as a user would).
    """
    page = await open_panel(
        browser, base, tokens, viewport={"width": 1280, "height": 900}
    )
    await page.goto(f"{base}/config/integrations/integration/ollama")
    await page.get_by_role("button", name="Reconfigure conversation agent").click()
    await page.get_by_text("Control Home Assistant").wait_for(timeout=WAIT_MS)
    for api in ("Assist", "Memory"):
        box = page.get_by_role("checkbox", name=api, exact=True)
        await box.wait_for(timeout=WAIT_MS)
        assert await box.is_checked(), api
    folder.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(folder / "quick-start-agent-memory.png"))
    await page.context.close()


async def settled(page: Page) -> None:
    """Wait until Home Assistant's launch screen has faded out (it is removed then)."""
    await page.locator("#ha-launch-screen").wait_for(state="detached", timeout=WAIT_MS)


async def shoot(
    browser: Browser, base: str, tokens: dict[str, Any], folder: Path, page: Page
) -> None:
    """Save the panel at desktop and phone width, light and dark."""
    folder.mkdir(parents=True, exist_ok=True)
    await settled(page)
    await page.screenshot(path=str(folder / "panel-desktop-light.png"))
    for name, context in (
        (
            "panel-desktop-dark",
            {"viewport": {"width": 1280, "height": 800}, "color_scheme": "dark"},
        ),
        (
            "panel-phone-light",
            {"viewport": {"width": 360, "height": 740}, "is_mobile": True},
        ),
        (
            "panel-phone-dark",
            {
                "viewport": {"width": 360, "height": 740},
                "is_mobile": True,
                "color_scheme": "dark",
            },
        ),
    ):
        shot = await open_panel(browser, base, tokens, **context)
        await shot.get_by_text("The bins go out on Thursday evening").wait_for(
            timeout=WAIT_MS
        )
        await settled(shot)
        await shot.screenshot(path=str(folder / f"{name}.png"))
        if name == "panel-phone-light":
            # At phone width the menu button opens Home Assistant's sidebar.
            await shot.get_by_role("button", name="Menu").click()
            await shot.locator('a[href="/memory"]').first.wait_for(timeout=WAIT_MS)


def main() -> int:
    """Run the checks; print the timings and the bundle's size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screenshots", type=Path)
    args = parser.parse_args()
    timings = asyncio.run(check(args))
    bundle = REPO / "custom_components/memory/frontend/memory-panel.js"
    print("panel_browser: every check passed")  # noqa: T201
    for name, ms in timings.items():
        print(f"panel_browser: {name}: {ms:.0f} ms")  # noqa: T201
    print(f"panel_browser: bundle {bundle.stat().st_size} bytes")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
