"""Seed a dev Home Assistant config folder before script/develop starts it.

Three stores in <config>/.storage, written in the formats of the installed
Home Assistant (built with its own classes and schemas, so they follow it):

- ``http``: the stable HTTP settings listen on the given host and port. 2026.10
  keeps HTTP settings here instead of in YAML; a pending (unconfirmed) config
  is dropped so it cannot move the server elsewhere.
- ``core.config_entries``: an Assist Memory entry on keyword search, unless
  one exists, so the integration is set up without any step in the UI.
- ``onboarding``: the location and analytics steps marked done, so onboarding
  asks only for the owner account. Finishing the location step is what adds
  Met.no, Radio Browser, Google Translate and the shopping list: integrations
  that call the internet (and log a DNS traceback at shutdown without it)
  and have nothing to do with memory.

With ``--ollama URL`` it also adds Home Assistant's ``ollama`` integration on
that server (a conversation agent with the Assist and Memory APIs, and an AI
Task entity for digestion), unless one exists: the browser test runs a
scripted Ollama server there; a developer may point it at a real Ollama.

Run it only while that Home Assistant is stopped: it rewrites both stores on
shutdown.
"""

import argparse
import json
from pathlib import Path
import sys
from types import MappingProxyType
from typing import Any

from homeassistant import config_entries
from homeassistant.components.http import config as http_config
from homeassistant.components.http.const import CONF_SERVER_HOST, CONF_SERVER_PORT
from homeassistant.components.onboarding import (
    STORAGE_KEY as ONBOARDING_KEY,
    STORAGE_VERSION as ONBOARDING_VERSION,
)
from homeassistant.components.onboarding.const import STEP_ANALYTICS, STEP_CORE_CONFIG
from homeassistant.util import dt as dt_util
import probatio

DOMAIN = "memory"
ENTRY_TITLE = "Assist Memory"
ENTRY_DATA = {"provider": "keyword"}


def _read_store(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    store: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return store


def _write_store(
    path: Path, key: str, version: int, minor_version: int, data: dict[str, Any]
) -> None:
    store = {
        "version": version,
        "minor_version": minor_version,
        "key": key,
        "data": data,
    }
    tmp = path.with_name(f"{path.name}.seed")
    tmp.write_text(json.dumps(store, indent=2) + "\n", encoding="utf-8")
    tmp.chmod(0o600)  # Home Assistant keeps its stores private
    tmp.replace(path)


def seed_http(storage: Path, host: str, port: int) -> None:
    """Make the stable HTTP config listen on host:port only."""
    path = storage / http_config.STORAGE_KEY
    stable: dict[str, Any] = {}
    store = _read_store(path)
    if (
        store is not None
        and store.get("version") == http_config.STORAGE_VERSION
        and store.get("minor_version") == http_config.STORAGE_MINOR_VERSION
    ):
        stable = {
            key: value
            for key, value in store["data"][http_config.KEY_STABLE].items()
            if key
            not in (
                http_config.HTTP_CONFIG_CREATED_AT,
                http_config.HTTP_CONFIG_ERROR,
                http_config.HTTP_CONFIG_ERROR_MESSAGE,
            )
        }
    stable |= {
        CONF_SERVER_HOST: [host],
        CONF_SERVER_PORT: port,
    }
    data = {
        http_config.KEY_STABLE: {
            **http_config.HTTP_STORAGE_SCHEMA(stable),
            http_config.HTTP_CONFIG_CREATED_AT: dt_util.utcnow().isoformat(),
            http_config.HTTP_CONFIG_ERROR: None,
            http_config.HTTP_CONFIG_ERROR_MESSAGE: None,
        },
        http_config.KEY_PENDING: None,
        http_config.KEY_YAML_MIGRATION_DONE: True,
    }
    _write_store(
        path,
        http_config.STORAGE_KEY,
        http_config.STORAGE_VERSION,
        http_config.STORAGE_MINOR_VERSION,
        data,
    )


def _add_entry(storage: Path, entry: config_entries.ConfigEntry) -> bool:
    """Add `entry` unless one of its domain exists; return if added."""
    path = storage / config_entries.STORAGE_KEY
    store = _read_store(path)
    if store is None:
        store = {
            "version": config_entries.STORAGE_VERSION,
            "minor_version": config_entries.STORAGE_VERSION_MINOR,
            "data": {"entries": []},
        }
    elif store.get("version") != config_entries.STORAGE_VERSION or (
        store.get("minor_version", 1) > config_entries.STORAGE_VERSION_MINOR
    ):
        print(f"seed: {path} has an unknown format; not adding a {entry.domain} entry")
        return False
    entries: list[dict[str, Any]] = store["data"]["entries"]
    if any(existing["domain"] == entry.domain for existing in entries):
        return False
    entries.append(entry.as_dict())
    _write_store(
        path,
        config_entries.STORAGE_KEY,
        store["version"],
        store.get("minor_version", 1),
        store["data"],
    )
    return True


def seed_config_entry(storage: Path) -> bool:
    """Add a keyword-search memory entry unless one exists; return if added."""
    return _add_entry(
        storage,
        config_entries.ConfigEntry(
            data=ENTRY_DATA,
            discovery_keys=MappingProxyType({}),
            domain=DOMAIN,
            minor_version=1,
            options={},
            source=config_entries.SOURCE_USER,
            subentries_data=None,
            title=ENTRY_TITLE,
            unique_id=None,
            version=1,
        ),
    )


OLLAMA_MODEL = "llama3.2:latest"


def seed_ollama(storage: Path, url: str, model: str = OLLAMA_MODEL) -> bool:
    """Add an `ollama` entry with a conversation agent and an AI Task; return if added."""
    entry = config_entries.ConfigEntry(
        data={"url": url},
        discovery_keys=MappingProxyType({}),
        domain="ollama",
        minor_version=3,
        options={},
        source=config_entries.SOURCE_USER,
        subentries_data=[
            config_entries.ConfigSubentryData(
                data={
                    "model": model,
                    "prompt": "You are a household assistant.",
                    "llm_hass_api": ["assist", DOMAIN],
                    "max_history": 20,
                    "num_ctx": 8192,
                    "keep_alive": -1,
                    "think": False,
                },
                subentry_type="conversation",
                title="Ollama Conversation",
                unique_id=None,
            ),
            config_entries.ConfigSubentryData(
                data={
                    "model": model,
                    "num_ctx": 8192,
                    "keep_alive": -1,
                    "think": False,
                },
                subentry_type="ai_task_data",
                title="Ollama AI Task",
                unique_id=None,
            ),
        ],
        title="Ollama",
        unique_id=None,
        version=3,
    )
    return _add_entry(storage, entry)


# Onboarding steps the dev instance skips (see the module docstring).
SKIPPED_ONBOARDING_STEPS = (STEP_CORE_CONFIG, STEP_ANALYTICS)
# What finishing the location step would have added.
ONBOARDING_INTEGRATIONS = ("google_translate", "met", "radio_browser", "shopping_list")


def seed_onboarding(storage: Path) -> bool:
    """Mark the location and analytics steps done; return if anything changed."""
    path = storage / ONBOARDING_KEY
    store = _read_store(path)
    if store is None:
        store = {"version": ONBOARDING_VERSION, "minor_version": 1, "data": {}}
    elif store.get("version") != ONBOARDING_VERSION:
        print(f"seed: {path} has an unknown format; onboarding left as it is")
        return False
    done: list[str] = store["data"].setdefault("done", [])
    missing = [step for step in SKIPPED_ONBOARDING_STEPS if step not in done]
    if not missing:
        return False
    done.extend(missing)
    _write_store(
        path,
        ONBOARDING_KEY,
        store["version"],
        store.get("minor_version", 1),
        store["data"],
    )
    return True


def onboarded_integrations(storage: Path) -> list[str]:
    """Integrations an earlier onboarding of this folder added."""
    store = _read_store(storage / config_entries.STORAGE_KEY)
    if store is None:
        return []
    return sorted(
        {
            entry["domain"]
            for entry in store["data"]["entries"]
            if entry["domain"] in ONBOARDING_INTEGRATIONS
            and entry.get("source") == "onboarding"
        }
    )


def main() -> int:
    """Seed the stores named in the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path, help="Home Assistant config folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="8123")
    parser.add_argument("--ollama", metavar="URL", help="add Ollama on this server")
    args = parser.parse_args()
    try:
        port: int = probatio.Port()(args.port)
    except probatio.Invalid:
        print(f"seed: invalid port {args.port!r}", file=sys.stderr)
        return 2
    storage: Path = args.config / ".storage"
    storage.mkdir(parents=True, exist_ok=True)
    seed_http(storage, args.host, port)
    print(f"seed: HTTP server on {args.host}:{port}")
    if seed_config_entry(storage):
        print(f"seed: added the {ENTRY_TITLE} entry (keyword search)")
    if args.ollama and seed_ollama(storage, args.ollama):
        print(f"seed: added Ollama on {args.ollama} (an agent and an AI Task)")
    if seed_onboarding(storage):
        print("seed: onboarding asks only for the owner account")
    if leftovers := onboarded_integrations(storage):
        print(
            f"seed: an earlier onboarding added {', '.join(leftovers)}; delete them"
            " under Settings > Devices & services, or start over with rm -rf config"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
