"""`PostgresStore`: the memory store's facade on PostgreSQL, as `MemoryStore` on SQLite.

The same public calls with the same results and errors, for what the
integration asks of the store, composed of this room's parts over one
asyncpg pool: `PostgresMemories`, `PostgresCuration`, `PostgresReads`,
`StoreVectors` (the model's index and search), `store_browse`,
`store_exports`, `store_earlier`, `job_store` and `secret_checks` (the
embedding queue's and its recheck's, claimed in an instance's name).

Listeners (`add_listener`, plain callables as `MemoryStore`'s; the
machinery in `store_listeners`) are called after each of this store's
committed writes, as SQLite's are, and when the feed hears another
instance's write (or reconnects, when notices may have been lost); the
feed leaves out this store's own notices, so no write is told twice.
Notices name their store by `sender`, random for each store; claims go
by `instance` (stable: a Home Assistant's), so two installs cloned from
one backup share claims yet hear each other's writes. Erase listeners
(`add_erase_listener`) are awaited with the scopes that lost text for
good: after this store's purges and moves to another scope, and, in a
task of their own, when another instance's notice says it erased.

Several instances' writes interleave: the parts lock what they change and
the one-active-twin index settles two adds of one fact. `cosine_scale`
reads the server (a coroutine here). A reworded memory's vectors go after
its reword commits (SQLite: in it). The URL's password is only ever
logged through `redact_url`.

Faults (`faults`): the pool is a `FaultPool`, so every call, and the log
and queues built on `pool`, raise `DatabaseUnavailableError` when the
server cannot be reached, drops or hangs past `command_timeout`; the
store works again by itself once the server is back. `open` gives up
after `timeout` seconds. `available` and `add_availability_listener`
say when the server stops answering (a call failed on its connection, the
feed cannot reconnect) and answers again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
import logging
import time
from typing import Final, Literal
import uuid

import numpy.typing as npt

from ..errors import DatabaseTooNewError, DatabaseUnavailableError, InvalidInputError
from ..languages import DEFAULT_LANGUAGE
from ..models import (
    AddResult,
    MemoryItem,
    MemoryType,
    NewMemory,
    SearchHit,
    SearchQuery,
    StoreStats,
    Vector,
    to_timestamp,
)
from ..search import MATCH_BUDGET
from ..store import BrowsePage, BrowseQuery, EarlierConversation, EarlierQuery
from ..vectors import Readings, Scale, as_unit_vectors
from .curation import PostgresCuration
from .faults import (
    COMMAND_TIMEOUT,
    CONNECT_TIMEOUT,
    Availability,
    AvailabilityListener,
    FaultPool,
    deadline,
    open_pool,
)
from .job_store import PostgresJobs
from .memories import PostgresMemories
from .notify import ChangeFeed
from .reads import PostgresReads
from .schema import migrate
from .secret_checks import PostgresSecretChecks
from .server import redact_url
from .store_browse import browse
from .store_earlier import earlier_conversations
from .store_exports import active_scopes, browse_all, count_changed
from .store_listeners import StoreListeners
from .store_vectors import StoreVectors

_LOGGER = logging.getLogger(__name__)

# Connections of the pool: a search holds two at once (keywords, vectors).
POOL_SIZE: Final = 4


@dataclass(slots=True)
class _Parts:
    """What an open store holds."""

    pool: FaultPool
    memories: PostgresMemories
    curation: PostgresCuration
    reads: PostgresReads
    vectors: StoreVectors
    feed: ChangeFeed


class PostgresStore(StoreListeners):
    """Stores, finds and forgets memories in one PostgreSQL database."""

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        clock: Callable[[], float] = time.time,
        language: str = DEFAULT_LANGUAGE,
        instance: str | None = None,
        pool_size: int = POOL_SIZE,
        timeout: float = CONNECT_TIMEOUT,
        command_timeout: float = COMMAND_TIMEOUT,
    ) -> None:
        """Hold the URL and settings; nothing connects until `open`.

        `instance` is the stable name claims are made in (embedding jobs,
        digestion; default: a random name). Change notices carry `sender`
        instead, random for each store, so that its feed leaves out only
        its own: two Home Assistants with one instance id (one restored
        from the other's backup) still hear each other. `timeout`
        bounds `open` and each connection attempt, `command_timeout` each
        query and each wait for a pooled connection (seconds).
        """
        self._url = url
        self._model = model
        self._clock = clock
        self._language = language
        # How well the model reads each language (`vectors.Readings`): the
        # embedding worker measures, searches weigh their vectors by it.
        self.readings = Readings(language)
        self.instance = instance or uuid.uuid4().hex
        self.sender = uuid.uuid4().hex
        self._pool_size = pool_size
        self._timeout = timeout
        self._command_timeout = command_timeout
        self._availability = Availability(url)
        self._parts: _Parts | None = None
        super().__init__(self._scopes_with_memories)
        self._match_budget: int | None = None

    def __repr__(self) -> str:
        """Name the store by its URL, the password hidden."""
        return f"PostgresStore({redact_url(self._url)!r})"

    # -- the database -------------------------------------------------------

    @property
    def language(self) -> str:
        """Home Assistant's language: of texts that come without their own."""
        return self._language

    @property
    def model(self) -> str | None:
        """The embedding model searches use."""
        return self._model

    @property
    def pool(self) -> FaultPool:
        """The open store's asyncpg pool: the conversation log and queue share it."""
        return self._open().pool

    @property
    def available(self) -> bool:
        """Say whether the server answered the last call (or the feed is back)."""
        return self._availability.available

    def add_availability_listener(
        self, listener: AvailabilityListener
    ) -> Callable[[], None]:
        """Call `listener(False)` when the server stops answering, `(True)` when back."""
        return self._availability.add_listener(listener)

    def _open(self) -> _Parts:
        if self._parts is None:
            raise DatabaseUnavailableError("the memory store is not open", path="")
        return self._parts

    async def open(self) -> None:
        """Check the server, make the pool, migrate, load the index, listen.

        A server the engine cannot use, or that does not answer within
        `timeout`, raises `DatabaseUnavailableError` with `check_server`'s
        message (no password in it); a schema newer than this code
        `DatabaseTooNewError`. Harmless when already open.
        """
        if self._parts is not None:
            return
        pool: FaultPool | None = None
        try:
            async with deadline(self._url, self._availability, self._timeout):
                pool = await open_pool(
                    self._url,
                    self._availability,
                    size=self._pool_size,
                    timeout=self._timeout,
                    command_timeout=self._command_timeout,
                )
                self._parts = await self._assemble(pool)
        except BaseException:
            if pool is not None:
                await pool.close()
            raise
        _LOGGER.debug("Opened the memories on %s", redact_url(self._url))

    async def _assemble(self, pool: FaultPool) -> _Parts:
        """Migrate, make the parts over `pool` and start the change feed."""
        async with pool.acquire() as connection:
            try:
                await migrate(connection)
            except RuntimeError as err:
                raise DatabaseTooNewError(str(err), path="") from err
        clock, language, sender = self._clock, self._language, self.sender
        vectors = StoreVectors(
            pool, self._model, sender, language, clock, self.readings
        )
        await vectors.load()
        if self._match_budget is not None:
            vectors.search.match_budget = self._match_budget
        feed = ChangeFeed(
            self._url, instance=sender, ignore_own=True, timeout=self._timeout
        )
        feed.add_listener(self._heard)
        feed.add_connection_listener(self._availability.set)
        with pool.guard(connecting=True):
            await feed.start()
        return _Parts(
            pool=pool,
            memories=PostgresMemories(
                pool, language=language, clock=clock, instance=sender
            ),
            curation=PostgresCuration(
                pool, language=language, clock=clock, instance=sender
            ),
            reads=PostgresReads(pool),
            vectors=vectors,
            feed=feed,
        )

    async def close(self) -> None:
        """Stop listening and close the pool; safe to call twice."""
        parts, self._parts = self._parts, None
        if parts is None:
            return
        try:
            await parts.vectors.close()
            await parts.feed.stop()
            await self._stop_erasing()
        finally:
            await parts.pool.close()

    async def _scopes_with_memories(self) -> frozenset[str]:
        """Every scope that has a memory (told of an erase that names none)."""
        records = await self._open().pool.fetch("SELECT DISTINCT scope FROM memories")
        return frozenset(str(record[0]) for record in records)

    # -- the memories -------------------------------------------------------

    async def add(
        self, memory: NewMemory, *, vector: npt.ArrayLike | None = None
    ) -> AddResult:
        """Add one memory, or return its active twin in the same scope."""
        return (await self.add_many([memory], vectors=[vector]))[0]

    async def add_many(
        self,
        memories: Sequence[NewMemory],
        *,
        vectors: Sequence[npt.ArrayLike | None] | None = None,
    ) -> list[AddResult]:
        """Add memories in one transaction; vectors are stored for created ones.

        Memories and vectors are all checked before anything is written;
        the vectors follow in a second transaction.
        """
        parts = self._open()
        prepared = parts.memories.prepare(memories)
        if vectors is not None and len(vectors) != len(memories):
            raise InvalidInputError("one vector per memory is needed")
        given = list(vectors or [])
        # Checked here, scaled once by `set_vectors`: a unit vector scaled
        # again may change in its last bits, and its cosines with it.
        checked = as_unit_vectors(given)
        if self._model is None and any(unit is not None for unit in checked):
            raise InvalidInputError("the store has no embedding model for vectors")
        written = await parts.memories.write(prepared, self._clock())
        new = {
            item.id: vector
            for (item, created), vector in zip(written, given, strict=False)
            if created and vector is not None
        }
        if new:
            await parts.vectors.set_vectors(new)
        self._changed()
        return [AddResult(item=item, created=created) for item, created in written]

    async def forget(self, ids: Sequence[int], *, purge: bool = False) -> list[int]:
        """Archive memories, or with `purge` delete them (vectors go with them).

        A purge then tells the erase listeners the purged memories' scopes.
        """
        parts = self._open()
        scopes: set[str] = set()
        if purge:
            scopes = {
                item.scope for item in (await parts.memories.get_many(ids)).values()
            }
        forgotten = await parts.memories.forget(ids, purge=purge)
        if forgotten:
            self._changed()
            await self.erased(scopes)
        return forgotten

    async def expire_due(self) -> list[int]:
        """Archive active memories whose expiry time has passed (ids ascending)."""
        expired = await self._open().curation.expire_due()
        if expired:
            self._changed()
        return expired

    async def mark_recalled(self, ids: Sequence[int]) -> None:
        """Record that memories were put into a prompt (no listener is told)."""
        await self._open().curation.mark_recalled(ids)

    async def get(self, item_id: int) -> MemoryItem | None:
        """One memory by id, whatever its status."""
        return await self._open().memories.get(item_id)

    async def get_many(self, ids: Sequence[int]) -> dict[int, MemoryItem]:
        """Memories by id; missing ids are absent from the result."""
        return await self._open().memories.get_many(ids)

    async def supersede(
        self, old_id: int, new: NewMemory, *, also: Sequence[int] = ()
    ) -> tuple[MemoryItem, MemoryItem]:
        """Add `new` and mark `old_id` (and `also`) superseded by it, atomically."""
        pair = await self._open().curation.supersede(old_id, new, also=also)
        self._changed()
        return pair

    async def update_content(
        self,
        item_id: int,
        *,
        content: str,
        confidence: float | None = None,
        topic: str | None = None,
    ) -> MemoryItem:
        """Reword an active memory in place; vectors of the old text are deleted."""
        parts = self._open()
        before = await parts.memories.get(item_id)
        updated = await parts.curation.update_content(
            item_id, content=content, confidence=confidence, topic=topic
        )
        if before is not None and before.content != updated.content:
            await parts.vectors.remove_all_models(item_id)
        self._changed()
        return updated

    async def update_details(
        self,
        item_id: int,
        *,
        kind: MemoryType | None = None,
        tags: Sequence[str] | None = None,
        expires_at: datetime | Literal["keep"] | None = "keep",
        scope: str | None = None,
    ) -> MemoryItem:
        """Change an active memory's type, tags, expiry or owner, in place.

        A new owner tells the erase listeners: text left the old one.
        """
        parts = self._open()
        before = await parts.memories.get(item_id)
        updated = await parts.curation.update_details(
            item_id, kind=kind, tags=tags, expires_at=expires_at, scope=scope
        )
        self._changed()
        if before is not None and before.scope != updated.scope:
            await self.erased({before.scope, updated.scope})
        return updated

    async def restore(self, ids: Sequence[int]) -> list[int]:
        """Bring archived memories back; active ones are left as they are."""
        restored = await self._open().curation.restore(ids)
        if restored:
            self._changed()
        return restored

    async def stats(self) -> StoreStats:
        """Return counts and sizes for sensors and diagnostics (never content)."""
        parts = self._open()
        stats = await parts.reads.stats(model=self._model)
        return replace(stats, vectors_by_model=await parts.vectors.counts())

    # -- vectors and search -------------------------------------------------

    async def set_vectors(self, vectors: Mapping[int, npt.ArrayLike]) -> None:
        """Store (or replace) vectors of the store's model for existing items."""
        if await self._open().vectors.set_vectors(vectors):
            self._changed()

    async def cosine_scale(self, unit: Vector) -> Scale | None:
        """Give how a unit query scores with unrelated memories (a coroutine here)."""
        return await self._open().vectors.cosine_scale(unit)

    @property
    def match_budget(self) -> int:
        """Rows a keyword MATCH may find (`search.MATCH_BUDGET`)."""
        if self._parts is not None:
            return self._parts.vectors.search.match_budget
        return MATCH_BUDGET if self._match_budget is None else self._match_budget

    @match_budget.setter
    def match_budget(self, budget: int) -> None:
        self._match_budget = budget
        if self._parts is not None:
            self._parts.vectors.search.match_budget = budget

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Find memories: keyword, semantic or both, fused into one ranking."""
        vectors = self._open().vectors
        if query.vector is not None and vectors.index is None:
            # Another instance may have stored the first vectors meanwhile.
            await vectors.load()
        return await vectors.search.search(query)

    async def stored_vectors(self, ids: Sequence[int]) -> dict[int, Vector]:
        """Read the active model's unit vectors of `ids` (those that have one)."""
        return await self._open().vectors.stored(ids)

    def embedding_jobs(self, instance: str) -> PostgresJobs:
        """Return the embedding jobs for a queue that claims as `instance`."""
        return PostgresJobs(self._open().pool, instance, self.sender)

    def secret_checks(self) -> PostgresSecretChecks:
        """Return the tables the secret detector's recheck reads and writes."""
        return PostgresSecretChecks(self._open().pool)

    # -- lookups and browsing -----------------------------------------------

    async def find_active(self, scope: str, content: str) -> MemoryItem | None:
        """Find the active memory of `scope` whose text normalises like `content`."""
        return await self._open().reads.find_active(scope, content)

    async def active_by_topic(self, scope: str, topic: str) -> list[MemoryItem]:
        """Active memories of `scope` with this exact topic, newest first."""
        return await self._open().reads.active_by_topic(scope, topic)

    async def browse(self, query: BrowseQuery) -> BrowsePage:
        """Return one page of memories in an order, and how many match."""
        return await browse(self._open().pool, query, self._clock())

    async def history(
        self, item: MemoryItem
    ) -> tuple[list[MemoryItem], list[MemoryItem]]:
        """Return what `item` superseded, oldest first, and what superseded it."""
        return await self._open().reads.history(item)

    # -- what the exports read (`store_exports`) ----------------------------

    async def browse_all(
        self, query: BrowseQuery, *, now: datetime | None = None
    ) -> list[MemoryItem]:
        """Every memory `query`'s filters select, by id, on no page (as SQLite's)."""
        moment = to_timestamp(now)
        pool = self._open().pool
        return await browse_all(
            pool, query, self._clock() if moment is None else moment
        )

    async def count_changed(
        self, scope: str, since: datetime | None, *, types: Sequence[MemoryType]
    ) -> int:
        """How many of `scope`'s memories of `types` were added or changed after `since`."""
        return await count_changed(self._open().pool, scope, to_timestamp(since), types)

    async def active_scopes(self) -> list[str]:
        """List the scopes that have an active memory, sorted."""
        return await active_scopes(self._open().pool)

    async def earlier(self, query: EarlierQuery) -> list[EarlierConversation]:
        """Return a speaker's recent conversations, summaries, turns (recall's "Earlier")."""
        return await earlier_conversations(self._open().pool, query)
