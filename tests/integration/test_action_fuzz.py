"""Property-based fuzzing of every `memory.*` action through a real set-up.

For each action, Hypothesis builds call data from the action's own schema
(its keys; `In` validators give their choices) mixed with hostile values:
huge and negative numbers, 2**64, inf/NaN/1e300, dates at year 1 and 9999
with offsets, nested dicts and lists, FTS5 syntax, NUL and invisible
characters, a 1 MB string, wrong types. Calls run one to three at a time,
concurrently, on one Home Assistant with the integration set up once.

Every call must end in a valid response or a translated
ServiceValidationError/HomeAssistantError of this integration (a schema
refusal too: `validation.ActionSchema` turns it into a translated error,
which Home Assistant's REST API answers with HTTP 400 and its message), never
in anything else (a bare 400, an HTTP 500 with a traceback). The database keeps what it
held and passes SQLite's integrity check.

Reproducible: derandomized, no example database, a bounded number of
examples per action (`FUZZ_EXAMPLES`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Coroutine
from contextlib import closing
from pathlib import Path
import sqlite3
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from hypothesis import HealthCheck, given, settings, strategies as st
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory.const import DOMAIN

from . import add, call

FUZZ_EXAMPLES = 100
# Longest a single fuzzed call may take before it counts as hung.
CALL_TIMEOUT = 30.0
ACTIONS = ("add", "search", "forget", "get", "digest", "export", "profile")

# A megabyte of text, drawn lazily so that Hypothesis never prints it.
MEGABYTE = st.just(1_000_000).map(lambda size: "x" * size)

HOSTILE_INTS = (
    st.sampled_from(
        [0, -1, 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**400]
    )
    | st.integers()
)
HOSTILE_FLOATS = (
    st.sampled_from(
        [float("inf"), float("-inf"), float("nan"), 1e300, -1e300, 5e-324, 0.0, -0.0]
    )
    | st.floats()
)
HOSTILE_DATES = st.sampled_from(
    [
        "0001-01-01T00:00:00+14:00",
        "0001-01-01T00:00:00-14:00",
        "9999-12-31T23:59:59-14:00",
        "9999-12-31T23:59:59+14:00",
        "9999-12-31",
        "0001-01-01",
        "1899-12-31T23:59:59Z",
        "2026-02-30T00:00:00",
        "now",
        "1e300",
    ]
) | st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat())
HOSTILE_DURATIONS = st.sampled_from(
    [
        {"days": 10**9},
        {"days": 2**64},
        {"hours": 1e300},
        {"hours": float("inf")},
        {"minutes": float("nan")},
        {"seconds": -1},
        {"weeks": "many"},
        "999999999:00:00",
        "-1:00:00",
        "inf",
        "1e300",
    ]
) | st.dictionaries(
    st.sampled_from(["days", "hours", "minutes", "seconds", "milliseconds"]),
    HOSTILE_INTS | HOSTILE_FLOATS,
    max_size=3,
)
HOSTILE_TEXT = (
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "nuts\x00and bolts",
            "\u200b",
            "\ufeff\u200d\u2060",
            "\u202egarden\u202c",
            "\u3164",
            'NEAR(garden hose, 2) AND "',
            "garden*",
            "content: garden OR NOT hose",
            "'; DROP TABLE memories; --",
            "person.anna",
            "person.",
            "two words",
        ]
    )
    | MEGABYTE
    | st.text(max_size=200)
    | st.text(st.characters(codec="utf-8"), max_size=50)
)
LEAVES = (
    HOSTILE_INTS
    | HOSTILE_FLOATS
    | HOSTILE_TEXT
    | st.booleans()
    | st.none()
    | st.binary(max_size=8)
)
NESTED = st.recursive(
    LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ANY_VALUE = (
    HOSTILE_INTS
    | HOSTILE_FLOATS
    | HOSTILE_DATES
    | HOSTILE_DURATIONS
    | HOSTILE_TEXT
    | NESTED
    | st.lists(HOSTILE_INTS | HOSTILE_TEXT, max_size=30)
)


# Values tried against every field's own validator: those it accepts are
# the field's likely values, so that calls get past the schema into the
# handler and the database with hostile but valid input.
PROBES: list[Any] = [
    "garden",
    "nuts allergy",
    "Mia is allergic to nuts",
    "two words",
    "health",
    "person.anna",
    "01JD5Q2Z8X4N6M3K7P9R1T0V2W",
    "\x00",
    "nuts\x00and bolts",
    "\u200b\ufeff",
    "\u202egarden\u202c",
    'NEAR(garden hose, 2) AND "',
    "garden* OR NOT content:hose",
    1,
    2,
    50,
    2**63 - 1,
    2**63,
    10**400,
    0.5,
    1e-9,
    3650,
    36_500,
    True,
    False,
    ["garden"],
    ["health", "two words", "x" * 40],
    [f"tag{i}" for i in range(25)],
    [1, 2],
    [2**63],
    {"days": 1},
    {"days": 36_500},
    {"hours": 1, "minutes": 30},
    "2026-03-14T09:26:53+00:00",
    "2030-01-05 12:00:00",
    "8999-12-31T12:00:00-05:00",
    "1900-01-01T00:00:00+00:00",
]


def _accepted(validator: Any) -> list[Any]:
    """Return the probes a field's validator accepts."""
    field = probatio.Schema(validator)
    accepted = []
    for probe in PROBES:
        try:
            field(probe)
        except Exception:  # noqa: BLE001, S112 - probing: any refusal means no
            continue
        accepted.append(probe)
    return accepted


def _choices(validator: Any) -> list[Any]:
    """Collect the values of `In` validators anywhere inside a validator."""
    if isinstance(validator, probatio.In):
        return sorted(validator.container, key=str)
    found: list[Any] = []
    for inner in getattr(validator, "validators", ()) or ():
        found += _choices(inner)
    if isinstance(validator, list):
        for inner in validator:
            found += _choices(inner)
    return found


def _mostly(
    likely: st.SearchStrategy[Any], other: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Draw from `likely` four times in five, else from `other`.

    Not `one_of`: it flattens nested `one_of`s into one list of branches, so
    the many hostile branches would crowd out the likely ones.
    """
    return st.integers(0, 4).flatmap(lambda pick: other if pick == 0 else likely)


def _kin(accepted: list[Any]) -> st.SearchStrategy[Any]:
    """Hostile values of the kinds a field accepts (numbers, dates, ...)."""
    kinds: list[st.SearchStrategy[Any]] = []
    if any(isinstance(value, float | int) for value in accepted):
        kinds += [HOSTILE_INTS, HOSTILE_FLOATS]
    if "2030-01-05 12:00:00" in accepted:
        kinds.append(HOSTILE_DATES)
    if {"days": 1} in accepted:
        kinds.append(HOSTILE_DURATIONS)
    if "garden" in accepted:
        kinds.append(HOSTILE_TEXT)
    return st.one_of(kinds) if kinds else ANY_VALUE


def _field_values(validator: Any) -> st.SearchStrategy[Any]:
    """Values for one schema field: mostly ones it accepts, often hostile ones.

    The hostile ones are, half of the time, of a kind the field takes (huge
    numbers for a number, year 1 for a date), so that they meet the handler.
    """
    accepted = _choices(validator) + _accepted(validator)
    if not accepted:
        return ANY_VALUE
    likely = st.sampled_from(accepted)
    if "garden" in accepted:  # a text field: any text, and a megabyte of it
        likely = st.one_of(likely, HOSTILE_TEXT, MEGABYTE)
    hostile = st.booleans().flatmap(lambda kin: _kin(accepted) if kin else ANY_VALUE)
    return _mostly(likely, hostile)


def call_data(schema: probatio.Schema) -> st.SearchStrategy[dict[str, Any]]:
    """Call data for an action, field by field from its schema, plus extras."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for marker, validator in schema.schema.items():
        fields = required if isinstance(marker, probatio.Required) else optional
        fields[str(marker.schema)] = _field_values(validator)
    # A few optional fields per call, as callers write them: with all of
    # them present, one hostile value among a dozen would stop most calls
    # at the schema.
    chosen = (
        st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=3)
        if optional
        else st.just([])
    )
    known = chosen.flatmap(
        lambda names: st.fixed_dictionaries(
            {**required, **{name: optional[name] for name in names}}
        )
    )
    extra = st.dictionaries(st.text(max_size=10), LEAVES, max_size=2)
    return _mostly(known, st.builds(lambda a, b: {**b, **a}, known, extra))


def _schema(hass: HomeAssistant, action: str) -> probatio.Schema:
    schema = hass.services.async_services_for_domain(DOMAIN)[action].schema
    assert isinstance(schema, probatio.Schema)
    return schema


def _integrity(path: Path) -> tuple[str, int]:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        nuls = conn.execute(
            "SELECT count(*) FROM memories WHERE instr(content, char(0)) > 0"
        ).fetchone()[0]
    return str(check), int(nuls)


def _outcome(result: BaseException | dict[str, Any]) -> str:
    """Name what a call ended in; fail on anything but the allowed outcomes."""
    if isinstance(result, dict):
        return "response"
    if isinstance(result, HomeAssistantError):
        assert result.translation_domain == DOMAIN, repr(result)
        assert result.translation_key, repr(result)
        # A healthy database never fails: that would be a bug surfacing.
        assert result.translation_key != "store_failed", str(result)
        return f"{type(result).__name__}: {result.translation_key}"
    raise AssertionError(f"untranslated {type(result).__name__}: {result!r}")


@pytest.mark.parametrize("action", ACTIONS)
# Home Assistant itself draws from `random` (context ids) inside each example;
# the examples stay reproducible (derandomize).
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
async def test_action_fuzz(
    hass: HomeAssistant,
    init_integration: MockConfigEntry,
    database_file: Path,
    action: str,
) -> None:
    """Hostile call data never escapes as anything but a translated error."""
    kept = await add(hass, "The garden hose is in the shed", tags=["garden"])
    schema = _schema(hass, action)
    outcomes: Counter[str] = Counter()
    loop = hass.loop

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(CALL_TIMEOUT)

    async def attempt(data: dict[str, Any]) -> BaseException | dict[str, Any]:
        try:
            return await call(hass, action, data)
        except Exception as err:  # noqa: BLE001 - judged by _outcome
            return err

    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(st.lists(call_data(schema), min_size=1, max_size=3))
    def fuzz(batch: list[dict[str, Any]]) -> None:
        async def together() -> list[BaseException | dict[str, Any]]:
            return list(await asyncio.gather(*(attempt(data) for data in batch)))

        for result in run(together()):
            outcomes[_outcome(result)] += 1

    await hass.async_add_executor_job(fuzz)
    await hass.async_block_till_done()

    check, nuls = await hass.async_add_executor_job(_integrity, database_file)
    assert check == "ok"
    assert nuls == 0
    if action != "forget":  # forget may rightly archive or purge it
        assert (await call(hass, "get", {"id": kept}))["status"] == "active"
    assert sum(outcomes.values()) >= FUZZ_EXAMPLES
    # What the fuzzer covered, in the report of `pytest -rP` (docs/robustness.md).
    print(f"memory.{action}: {sum(outcomes.values())} calls, {dict(outcomes)}")  # noqa: T201
