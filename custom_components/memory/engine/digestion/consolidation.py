"""Consolidation: fold an extracted memory into what is already known.

Digestion turns a conversation into candidates; each one is compared with
the active memories of its scope and then either does nothing (a duplicate),
rewords a memory digestion wrote before (a near duplicate), replaces one
with a link back (a change: "lives in Portland" -> "moved to Seattle"), or
is added. Deterministic rules decide wherever they can (`Consolidator.plan`):

1. Exact duplicate: the same normalised text in the scope -> DUPLICATE.
2. `replaces`: ids the extractor says the candidate makes outdated; each
   must exist, be active, be in the candidate's scope and of its family
   (summaries and profiles only replace their own kind) -> SUPERSEDE.
3. Same topic, single-valued, same type -> SUPERSEDE every active memory of
   that topic. Single-valued by default: facts, instructions, summaries,
   profiles and `other` (a home city, a bedtime, a rule has one value at a
   time); preferences and events are multi-valued ("likes jazz" and "likes
   tea" both hold). The extractor may say otherwise (`single_valued`).
4. Near duplicate of an active memory of the same type (keyword overlap and,
   with vectors, cosine at or above the measured thresholds, and no other
   numbers, negation or name on one side only): digestion's own
   memory -> UPDATE (the longer wording, the higher confidence); a memory a
   person, an action, a tool or an import wrote -> DUPLICATE: digestion
   never rewords people silently, it can only supersede them with a link.
   A memory keeps its language: a candidate written in another one never
   rewords it (keyword search analyses each memory in its own language).
5. Same topic but multi-valued or of another type, or similar but below
   the near-duplicate thresholds -> ASK: the pipeline asks the LLM a second,
   structured question (`consolidation_question.py`) and calls `apply`
   with its answer.
6. Otherwise -> ADD.

Summary and profile candidates are never merged with other kinds (rules 1-3
only, within their own family; rule 1 is the store's: one active copy of a
text per scope, whatever its type). The thresholds (`near_duplicates.py`)
come from `bench/dedup.py` on a labelled set of pairs
(docs/benchmarks/dedup.md): they favour precision, because a wrong merge
loses information and a missed duplicate only costs a row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import numpy as np

from ..errors import InvalidInputError
from ..languages import language_code
from ..models import (
    MAX_TAG_CHARS,
    MAX_TAGS,
    MemoryItem,
    MemoryStatus,
    MemoryType,
    NewMemory,
    Origin,
    SearchQuery,
    Source,
    Vector,
)
from ..store_api import MemoryCuration
from ..text import fold, normalize_tag
from ..vectors import as_unit_vector
from .near_duplicates import (
    DEFAULT_THRESHOLDS,
    Thresholds,
    conflicting,
    is_near_duplicate,
    is_similar,
    keyword_overlap,
)

type Embed = Callable[[str], Awaitable[Vector | None]]

MAX_TOPIC_CHARS: Final = 100
# Kinds that are only ever compared with their own type.
_OWN_KIND: Final = frozenset({MemoryType.SUMMARY, MemoryType.PROFILE})
_MULTI_VALUED: Final = frozenset({MemoryType.PREFERENCE, MemoryType.EVENT})
_DURABLE: Final = tuple(kind for kind in MemoryType if kind not in _OWN_KIND)


class Action(StrEnum):
    """What happens to a candidate."""

    DUPLICATE = "duplicate"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    ADD = "add"
    ASK = "ask"


class Rule(StrEnum):
    """Which rule chose a plan's action (for logs, counters and the LLM)."""

    EXACT = "exact"
    REPLACES = "replaces"
    TOPIC = "topic"
    NEAR_DUPLICATE = "near_duplicate"
    SAME_TOPIC = "same_topic"
    SIMILAR = "similar"
    NEW = "new"


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A memory the extractor proposes, before it meets what is known."""

    content: str
    type: MemoryType
    scope: str
    source: Source
    confidence: float = 1.0
    topic: str = ""
    replaces: tuple[int, ...] = ()
    message_id: int | None = None
    tags: tuple[str, ...] = ()
    # Whether the topic holds one value at a time; None: by type (module doc).
    single_valued: bool | None = None
    # The language it is written in ("de"); None: the store's default.
    language: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What `Consolidator.plan` decided, and on what evidence."""

    candidate: Candidate
    action: Action
    target: MemoryItem | None
    keyword_overlap: float | None = None
    cosine: float | None = None
    # Further memories a SUPERSEDE replaces (several `replaces` ids, or
    # several active memories of one single-valued topic).
    others: tuple[MemoryItem, ...] = ()
    rule: Rule = Rule.NEW


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What `Consolidator.apply` did."""

    action: Action
    item: MemoryItem
    previous: MemoryItem | None


@dataclass(frozen=True, slots=True)
class _Similarity:
    """How close a known memory is to the candidate."""

    item: MemoryItem
    overlap: float
    cosine: float | None
    conflict: bool = False


def normalize_topic(topic: str) -> str:
    """Fold a topic key so that "Home  City." and "home city" are one topic."""
    return " ".join(fold(topic).split()).strip(" .!?;,:")[:MAX_TOPIC_CHARS]


def _single_valued(candidate: Candidate) -> bool:
    if candidate.single_valued is not None:
        return candidate.single_valued
    return candidate.type not in _MULTI_VALUED


def _kind(memory_type: MemoryType) -> MemoryType:
    """Types that count as the same: `other` is a fact."""
    return MemoryType.FACT if memory_type is MemoryType.OTHER else memory_type


def _same_family(left: MemoryType, right: MemoryType) -> bool:
    if left in _OWN_KIND or right in _OWN_KIND:
        return left == right
    return True


def _tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Tags the store accepts; an extractor's unusable ones are dropped."""
    kept: dict[str, None] = {}
    for tag in tags:
        normal = normalize_tag(tag)
        if normal is not None and len(normal) <= MAX_TAG_CHARS:
            kept[normal] = None
    return tuple(kept)[:MAX_TAGS]


class Consolidator:
    """Plans and applies what each extracted candidate does to the store."""

    def __init__(
        self,
        store: MemoryCuration,
        *,
        embed: Embed | None = None,
        thresholds: Thresholds = DEFAULT_THRESHOLDS,
    ) -> None:
        """`embed` gives a text's vector of the store's model (None: keywords only)."""
        self.store = store
        self._embed = embed
        self.thresholds = thresholds

    # -- planning -------------------------------------------------------------

    async def plan(self, candidate: Candidate) -> Plan:
        """Decide what a candidate should do; changes nothing."""
        twin = await self.store.find_active(candidate.scope, candidate.content)
        if twin is not None:
            return Plan(
                candidate=candidate,
                action=Action.DUPLICATE,
                target=twin,
                keyword_overlap=1.0,
                rule=Rule.EXACT,
            )
        replaced = await self._replaced(candidate)
        if replaced:
            return self._supersede(candidate, replaced, Rule.REPLACES)
        topic = normalize_topic(candidate.topic)
        same_topic = [
            item
            for item in await self.store.active_by_topic(candidate.scope, topic)
            if _same_family(item.type, candidate.type)
        ]
        exclusive = [
            item for item in same_topic if _kind(item.type) == _kind(candidate.type)
        ]
        if exclusive and _single_valued(candidate):
            return self._supersede(candidate, exclusive, Rule.TOPIC)
        if candidate.type in _OWN_KIND:
            return Plan(candidate=candidate, action=Action.ADD, target=None)
        return await self._compare(candidate, same_topic)

    async def _replaced(self, candidate: Candidate) -> list[MemoryItem]:
        """Keep the `replaces` ids that may be superseded; ignore the others."""
        if not candidate.replaces:
            return []
        found = await self.store.get_many(candidate.replaces)
        return [
            found[item_id]
            for item_id in dict.fromkeys(candidate.replaces)
            if item_id in found
            and found[item_id].status is MemoryStatus.ACTIVE
            and found[item_id].scope == candidate.scope
            and _same_family(found[item_id].type, candidate.type)
        ]

    def _supersede(
        self, candidate: Candidate, items: Sequence[MemoryItem], rule: Rule
    ) -> Plan:
        target, *others = items
        return Plan(
            candidate=candidate,
            action=Action.SUPERSEDE,
            target=target,
            keyword_overlap=keyword_overlap(
                candidate.content, target.content, *self._languages(candidate, target)
            ),
            others=tuple(others),
            rule=rule,
        )

    async def _compare(
        self, candidate: Candidate, same_topic: Sequence[MemoryItem]
    ) -> Plan:
        """Rules 4-6: near duplicate, ask, add."""
        vector = await self._vector(candidate.content)
        hits = await self.store.search(
            SearchQuery(
                text=candidate.content,
                vector=vector,
                scopes=(candidate.scope,),
                types=_DURABLE,
                limit=self.thresholds.pool,
                language=candidate.language,
            )
        )
        pool = {hit.item.id: hit.item for hit in hits}
        pool.update((item.id, item) for item in same_topic)
        measured = await self._measure(candidate, vector, list(pool.values()))
        near = [
            pair
            for pair in measured
            if not pair.conflict
            and _kind(pair.item.type) == _kind(candidate.type)
            and is_near_duplicate(pair.overlap, pair.cosine, self.thresholds)
        ]
        if near:
            best = max(near, key=_closeness)
            action = (
                Action.UPDATE
                if best.item.source.origin is Origin.DIGESTION
                else Action.DUPLICATE
            )
            return self._plan(candidate, action, best, Rule.NEAR_DUPLICATE)
        topic_ids = {item.id for item in same_topic}
        if topic_ids:
            best = max(
                (pair for pair in measured if pair.item.id in topic_ids),
                key=lambda pair: (pair.item.updated_at, pair.item.id),
            )
            return self._plan(candidate, Action.ASK, best, Rule.SAME_TOPIC)
        similar = [
            pair
            for pair in measured
            if is_similar(pair.overlap, pair.cosine, self.thresholds)
        ]
        if similar:
            best = max(similar, key=_closeness)
            return self._plan(candidate, Action.ASK, best, Rule.SIMILAR)
        return Plan(candidate=candidate, action=Action.ADD, target=None)

    @staticmethod
    def _plan(
        candidate: Candidate, action: Action, pair: _Similarity, rule: Rule
    ) -> Plan:
        return Plan(
            candidate=candidate,
            action=action,
            target=pair.item,
            keyword_overlap=pair.overlap,
            cosine=pair.cosine,
            rule=rule,
        )

    async def _vector(self, text: str) -> Vector | None:
        if self._embed is None:
            return None
        vector = await self._embed(text)
        return None if vector is None else as_unit_vector(vector)

    async def _measure(
        self, candidate: Candidate, vector: Vector | None, items: list[MemoryItem]
    ) -> list[_Similarity]:
        """Overlap, cosine and conflict of each known memory with the candidate.

        Memories not embedded yet (added moments ago) are embedded here, so
        a pair is never judged on keywords alone while vectors are in use.
        """
        vectors: dict[int, Vector] = {}
        if vector is not None and items:
            vectors = await self.store.stored_vectors([item.id for item in items])
            for item in items:
                if (
                    item.id not in vectors
                    and (found := await self._vector(item.content)) is not None
                ):
                    vectors[item.id] = found
        return [
            _Similarity(
                item=item,
                overlap=keyword_overlap(
                    candidate.content, item.content, *self._languages(candidate, item)
                ),
                cosine=(
                    None
                    if vector is None or item.id not in vectors
                    else float(np.dot(vector, vectors[item.id]))
                ),
                conflict=conflicting(
                    candidate.content, item.content, *self._languages(candidate, item)
                ),
            )
            for item in items
        ]

    def _languages(self, candidate: Candidate, item: MemoryItem) -> tuple[str, str]:
        """Their languages, as search analyses them (unknown: the store's default)."""
        default = self.store.language
        return candidate.language or default, item.language or default

    # -- applying -------------------------------------------------------------

    async def apply(self, plan: Plan, resolution: Action | None = None) -> Outcome:
        """Carry out a plan; `resolution` answers an ASK plan (ignored otherwise).

        A target that is no longer active by now (forgotten, superseded
        meanwhile), or that is not in the candidate's scope, is never
        changed: the candidate is added instead. Store errors (invalid
        content, a database failure) propagate with nothing changed.
        """
        action = plan.action
        if action is Action.ASK:
            if resolution is None or resolution is Action.ASK:
                raise InvalidInputError("an ASK plan needs a resolution")
            action = resolution
        target = plan.target
        if target is not None:
            target = await self.store.get(target.id)
            if (
                target is None
                or target.status is not MemoryStatus.ACTIVE
                or target.scope != plan.candidate.scope
            ):
                action, target = Action.ADD, None
        if action is Action.DUPLICATE and target is not None:
            return Outcome(action=Action.DUPLICATE, item=target, previous=None)
        if action is Action.UPDATE and target is not None:
            return await self._update(plan.candidate, target)
        if action is Action.SUPERSEDE and target is not None:
            return await self._replace(plan, target)
        return await self._add(plan.candidate)

    def _new_memory(self, candidate: Candidate) -> NewMemory:
        return NewMemory(
            content=candidate.content,
            source=candidate.source,
            type=candidate.type,
            scope=candidate.scope,
            tags=_tags(candidate.tags),
            topic=normalize_topic(candidate.topic),
            confidence=min(max(float(candidate.confidence), 0.0), 1.0),
            message_id=candidate.message_id,
            language=candidate.language,
        )

    async def _add(self, candidate: Candidate) -> Outcome:
        result = await self.store.add(self._new_memory(candidate))
        action = Action.ADD if result.created else Action.DUPLICATE
        return Outcome(action=action, item=result.item, previous=None)

    async def _replace(self, plan: Plan, target: MemoryItem) -> Outcome:
        others = await self.store.get_many([item.id for item in plan.others])
        also = [
            item.id
            for item in others.values()
            if item.status is MemoryStatus.ACTIVE and item.scope == target.scope
        ]
        new, old = await self.store.supersede(
            target.id, self._new_memory(plan.candidate), also=also
        )
        if new.id == old.id:
            return Outcome(action=Action.DUPLICATE, item=new, previous=None)
        return Outcome(action=Action.SUPERSEDE, item=new, previous=old)

    async def _update(self, candidate: Candidate, target: MemoryItem) -> Outcome:
        """Reword digestion's own memory; anyone else's is left as it is."""
        if target.source.origin is not Origin.DIGESTION:
            return Outcome(action=Action.DUPLICATE, item=target, previous=None)
        wording = candidate.content.strip()
        longer = len(wording) > len(target.content)
        if longer and not _same_language(candidate, target):
            longer = False  # the memory stays in its own language
        content = wording if longer else target.content
        confidence = max(float(candidate.confidence), target.confidence or 0.0)
        twin = await self.store.find_active(target.scope, content)
        if twin is not None and twin.id != target.id:
            return Outcome(action=Action.DUPLICATE, item=twin, previous=None)
        updated = await self.store.update_content(
            target.id,
            content=content,
            confidence=min(confidence, 1.0),
            topic=None if target.topic else normalize_topic(candidate.topic) or None,
        )
        return Outcome(action=Action.UPDATE, item=updated, previous=target)


def _same_language(candidate: Candidate, target: MemoryItem) -> bool:
    """Whether the candidate is in the target's language (unknown: the same)."""
    wanted = language_code(candidate.language, default="")
    return not target.language or not wanted or target.language == wanted


def _closeness(pair: _Similarity) -> tuple[float, float]:
    return (pair.cosine if pair.cosine is not None else -1.0, pair.overlap)
