"""The report of a move between SQLite and PostgreSQL, and the counts behind it.

`Tally` counts while a copy runs (rows read and written per table, skipped
and derived tables, jobs put back to pending, both sides' counts and
checksums); `Tally.report` freezes them into a `TransferReport`, or raises
`TransferError` when the sides differ, so the copy's transaction rolls
back and a committed copy is always a verified one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import logging

from ..errors import TransferError

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TableCount:
    """One table's rows: read, written, and counted on each side before committing."""

    read: int
    written: int
    source: int
    destination: int

    @property
    def verified(self) -> bool:
        """Every row read was written, and both sides hold as many."""
        return self.read == self.written == self.source == self.destination


@dataclass(frozen=True, slots=True)
class TransferReport:
    """What a move copied, left out and made again, and whether both sides agree.

    `tables` by the destination's table name; `skipped`: source tables (or
    claims) the destination has no place for, with their rows; `derived`:
    source tables the destination makes again from what it copied;
    `reset_jobs`: ready jobs put back to pending, their vector left behind;
    `checksums`: (source, destination) sha256 of `transfer_tables.CHECKED`;
    `postings_match`: the destination's keyword index holds what the
    source's does (FTS5's vocabulary against the postings). `verified`:
    every table counted alike on both sides and the checksums equal, before
    the commit; a copy that is not verified is rolled back, never reported.
    """

    direction: str
    tables: Mapping[str, TableCount]
    skipped: Mapping[str, int]
    derived: Mapping[str, int]
    reset_jobs: Mapping[str, int]
    checksums: Mapping[str, tuple[str, str]]
    postings_match: bool
    verified: bool


class Tally:
    """The counts of one move while it runs; `report` checks and freezes them."""

    def __init__(self, direction: str) -> None:
        """Start with nothing counted."""
        self.direction = direction
        self.read: dict[str, int] = {}
        self.written: dict[str, int] = {}
        self.source: dict[str, int] = {}
        self.destination: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.derived: dict[str, int] = {}
        self.reset: dict[str, int] = {}
        self.checksums: dict[str, tuple[str, str]] = {}
        self.postings = True

    def add(self, table: str, read: int, written: int, reset: int = 0) -> None:
        """Count a batch of `table`."""
        self.read[table] = self.read.get(table, 0) + read
        self.written[table] = self.written.get(table, 0) + written
        if reset:
            self.reset[table] = self.reset.get(table, 0) + reset

    def report(self) -> TransferReport:
        """Return the report; raise `TransferError` (the copy rolls back) unless verified."""
        tables = {
            name: TableCount(
                self.read.get(name, 0),
                self.written.get(name, 0),
                self.source.get(name, 0),
                self.destination.get(name, 0),
            )
            for name in self.source
        }
        differ = [
            f"{name}: {count.read} read, {count.written} written,"
            f" {count.source} in the source, {count.destination} copied"
            for name, count in tables.items()
            if not count.verified
        ] + [
            f"{name}: checksums differ"
            for name, (mine, theirs) in self.checksums.items()
            if mine != theirs
        ]
        if differ:
            raise TransferError(
                "the copy does not match its source", error="; ".join(differ)
            )
        if not self.postings:
            _LOGGER.warning(
                "The keyword index made by the copy differs from its source's;"
                " keyword search may rank some memories differently"
            )
        return TransferReport(
            direction=self.direction,
            tables=tables,
            skipped=dict(self.skipped),
            derived=dict(self.derived),
            reset_jobs=dict(self.reset),
            checksums=dict(self.checksums),
            postings_match=self.postings,
            verified=True,
        )
