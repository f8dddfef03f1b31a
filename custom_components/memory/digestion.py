"""Digestion: ended conversations become memories through the household's LLM.

When capture reports a conversation ended (its chat log was deleted), when
one has been idle for the option's minutes, or when `memory.digest` asks,
its transcript (secrets redacted) goes to the AI Task entity with the
memories already known about its speaker, asking for memories in the
conversation's language (the one most of its user messages were spoken in,
else Home Assistant's). When two people spoke in it, each
one's part (what they said, the replies they got) is a call of its own, and
what comes back goes to that speaker or the household only: one person's
words never become another's memories. The answer is typed candidates
and a session summary; each candidate is folded into the store by the
consolidation engine, which asks the LLM one more structured question for
the pairs its rules cannot decide.

This module schedules the work and makes the AI Task calls; what is asked,
and how an answer becomes memories, is the engine's (`engine/digestion/extraction.py`).

Nothing is lost on failure: the conversation stays pending and is tried
again with a growing backoff (a rate limit only waits). Counts and the kind
of the last error are visible in sensors and diagnostics; content never is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
import contextlib
from datetime import datetime, timedelta
from typing import Any, Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.util import dt as dt_util
import probatio

from .access import scope_label
from .ai_task import AITaskClient, AITaskFailed, AITaskRateLimited, AITaskUnavailable
from .availability import outage_level
from .const import (
    CONF_DIGEST_IDLE_MINUTES,
    CONF_DIGEST_MIN_USER_WORDS,
    CONF_DIGEST_SKIP_AGENTS,
    CONF_DIGEST_SKIP_DEVICES,
    CONF_DIGESTION,
    DEFAULT_DIGEST_IDLE_MINUTES,
    DEFAULT_DIGEST_MIN_USER_WORDS,
    DOMAIN,
    ISSUE_AI_TASK_UNAVAILABLE,
    LOGGER,
)
from .embedding import EmbeddingRuntime, async_query_vector
from .engine import DATABASE_ERRORS, HOUSEHOLD, StoreError
from .engine.digestion import (
    MEMORY_TYPES,
    RESOLUTION_ACTIONS,
    Action,
    Candidate,
    Consolidator,
    DigestResult,
    DigestState,
    Extracted,
    PendingConversation,
    Plan,
    SkipReason,
    SpeakerPart,
    consolidate,
    extraction_answer,
    extraction_prompt,
    known_memories,
    known_query,
    names_for,
    part_source,
    question,
    read_extraction,
    read_resolutions,
    speaker_names,
    speaker_parts,
    summary_memory,
)
from .engine.languages import language_name
from .engine.models import Vector
from .engine.postgres import AnyConversationLog, AnyStore, digest_queue
from .usage import UsageTracker
from .worker import BackgroundWorker

# How often due conversations (idle ones, retries) are looked for.
TICK: Final = timedelta(minutes=1)
# Without an AI Task entity, look again this much later.
UNAVAILABLE_RETRY: Final = timedelta(minutes=15)
# Conversations digested per run of the queue (the rest wait for the next).
BATCH: Final = 20
EXTRACT_TASK: Final = "Assist Memory: digest a conversation"
RESOLVE_TASK: Final = "Assist Memory: compare memories"

# Lenient where an LLM's answer may differ in form only: numbers as strings,
# a confidence out of range, keys it added. Rendered to JSON schema for the
# LLM by the AI Task integration (`probatio.to_openapi`); what passes is
# read by `read_extraction` and `read_resolutions`.
EXTRACTION: Final = probatio.Schema(
    {
        probatio.Required("memories"): [
            probatio.Schema(
                {
                    probatio.Required("content"): str,
                    probatio.Required("type"): probatio.In(MEMORY_TYPES),
                    probatio.Required("about"): str,
                    probatio.Required("confidence"): probatio.All(
                        probatio.Coerce(float), probatio.Clamp(min=0, max=1)
                    ),
                    probatio.Optional("message_id"): probatio.Any(
                        None, probatio.Coerce(int)
                    ),
                    probatio.Optional("topic", default=""): str,
                    probatio.Optional("replaces", default=list): [probatio.Coerce(int)],
                },
                extra=probatio.REMOVE_EXTRA,
            )
        ],
        probatio.Required("summary"): str,
    },
    extra=probatio.REMOVE_EXTRA,
)
RESOLUTION: Final = probatio.Schema(
    {
        probatio.Required("decisions"): [
            probatio.Schema(
                {
                    probatio.Required("pair"): probatio.Coerce(int),
                    probatio.Required("action"): probatio.In(RESOLUTION_ACTIONS),
                },
                extra=probatio.REMOVE_EXTRA,
            )
        ]
    },
    extra=probatio.REMOVE_EXTRA,
)


class _Retry(Exception):  # noqa: N818 - control flow: stay pending
    def __init__(self, error: str, *, until: datetime | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.until = until


class Digestion(BackgroundWorker):
    """Watches for conversations to digest, and digests them one at a time."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        store: AnyStore,
        log: AnyConversationLog,
        ai_task: AITaskClient,
        usage: UsageTracker,
        embedding: EmbeddingRuntime | None,
    ) -> None:
        """Nothing runs until `async_start`."""
        super().__init__()
        self._hass = hass
        self._entry = entry
        self._store = store
        self._log = log
        self._ai_task = ai_task
        self._usage = usage
        self._embedding = embedding
        self.queue = digest_queue(store)
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[], None]] = []
        self._stopping = False
        # Waiting for the AI Task (nothing of the conversation written yet).
        self._asking = False
        self._again = False
        # For the sensors.
        self.waiting = 0
        self.unavailable = False

    # -- life cycle ---------------------------------------------------------

    async def async_start(self) -> None:
        """Count what waits, then look for due conversations every minute."""
        self._stopping = False
        await self._refresh()
        self._hold(
            async_track_time_interval(
                self._hass, self._tick, TICK, cancel_on_shutdown=True
            )
        )
        self.async_schedule()

    async def async_stop(self) -> None:
        """Stop looking; a digestion waiting for the LLM is cancelled.

        One that is writing finishes its conversation first, so a conversation
        is never left half applied; a cancelled one simply stays pending.
        """
        self._stopping = True
        self._release()
        if (task := self._task) is not None and not task.done():
            if self._asking:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None

    @property
    def enabled(self) -> bool:
        """Whether digestion runs by itself (`memory.digest` always works)."""
        return bool(self._entry.options.get(CONF_DIGESTION, True))

    @callback
    def add_listener(self, listener: Callable[[], None]) -> CALLBACK_TYPE:
        """Call `listener` when the waiting count or availability changes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def _tick(self, _now: datetime) -> None:
        self.async_schedule()

    @callback
    def async_schedule(self) -> None:
        """Digest what is due soon, in the background (capture calls this)."""
        if self._stopping or not self.enabled:
            return
        if self._task is None or self._task.done():
            self._task = self._entry.async_create_background_task(
                self._hass, self._run_due(), "memory digestion"
            )
        else:
            self._again = True  # a run is under way: look once more after it

    async def _run_due(self) -> None:
        self._again = True
        while self._again and not self._stopping:
            self._again = False
            if await self._run_due_once():
                break

    async def _run_due_once(self) -> bool:
        """Digest what is due; True when the AI Task made the rest wait."""
        try:
            now = dt_util.utcnow()
            idle = int(
                self._entry.options.get(
                    CONF_DIGEST_IDLE_MINUTES, DEFAULT_DIGEST_IDLE_MINUTES
                )
            )
            idle_before = now - timedelta(minutes=idle) if idle > 0 else None
            async with self._lock:
                # Read under the lock: `memory.digest` may just have done some.
                due = await self.queue.due(now, idle_before=idle_before, limit=BATCH)
                for conversation in due:
                    if self._stopping:
                        break
                    result = await self._digest(conversation)
                    if result.reason in ("unavailable", "rate_limited"):
                        return True  # the others would wait for the same
        except DATABASE_ERRORS as err:
            LOGGER.log(
                outage_level(self._store),
                "Digestion could not read the conversation log: %s",
                err,
            )
        finally:
            await self._refresh()
        return False

    async def _refresh(self) -> None:
        try:
            self.waiting = await self.queue.count_waiting()
        except DATABASE_ERRORS:
            return
        for listener in list(self._listeners):
            listener()

    # -- memory.digest --------------------------------------------------------

    async def async_digest(
        self, rows: Sequence[int], *, waiting_only: bool = False
    ) -> list[DigestResult]:
        """Digest these conversation rows now, backoff or not.

        With `waiting_only`, rows digested meanwhile (by the queue) are left.
        """
        results: list[DigestResult] = []
        try:
            async with self._lock:
                if waiting_only:
                    waiting = await self.queue.still_waiting(rows)
                    rows = [row for row in rows if row in waiting]
                for row in rows:
                    if (conversation := await self.queue.get(row)) is not None:
                        results.append(await self._digest(conversation))  # noqa: PERF401
        finally:
            await self._refresh()
        return results

    # -- one conversation -----------------------------------------------------

    async def _digest(self, conversation: PendingConversation) -> DigestResult:
        result = DigestResult(
            conversation=conversation.id,
            conversation_id=conversation.conversation_id,
            state=str(DigestState.PENDING),
        )
        now = dt_util.utcnow()
        since = (
            conversation.digested_at if conversation.state is DigestState.DONE else None
        )
        messages = await self._log.messages(conversation.id)
        last = max((m.created_at for m in messages), default=now)
        options = self._entry.options
        parts, skipped = speaker_parts(
            conversation,
            messages,
            names=speaker_names(messages, scope_label(self._hass)),
            since=since,
            min_user_words=int(
                options.get(CONF_DIGEST_MIN_USER_WORDS, DEFAULT_DIGEST_MIN_USER_WORDS)
            ),
            skip_agents=options.get(CONF_DIGEST_SKIP_AGENTS, ()),
            skip_devices=options.get(CONF_DIGEST_SKIP_DEVICES, ()),
        )
        if not parts:
            reason = skipped[0] if skipped else SkipReason.EMPTY
            if since is None:
                await self.queue.mark_skipped(conversation.id, when=last, reason=reason)
                result.state = str(DigestState.SKIPPED)
            else:  # only its new messages were not worth it
                await self.queue.mark_done(conversation.id, when=last)
                result.state = str(DigestState.DONE)
            result.reason = str(reason)
            return result
        try:
            try:
                await self._extract_and_store(
                    conversation,
                    parts,
                    result,
                    await self.queue.language(conversation.id),
                )
            except StoreError as err:
                # Tried again later like a failed call, never every minute.
                LOGGER.warning("Digestion could not store memories: %s", err)
                raise _Retry("store") from err
        except _Retry as retry:
            result.reason = retry.error
            if retry.until is not None:
                await self.queue.defer(conversation.id, retry.until, error=retry.error)
                result.retry_at = retry.until
            else:
                result.retry_at = await self.queue.mark_failed(
                    conversation.id, error=retry.error, now=now
                )
                self._usage.record_digestion_failure(retry.error)
            return result
        await self.queue.mark_done(conversation.id, when=last)
        self._usage.record_digestion(
            added=len(result.added),
            updated=len(result.updated),
            superseded=len(result.superseded),
        )
        result.state = str(DigestState.DONE)
        return result

    async def _extract_and_store(
        self,
        conversation: PendingConversation,
        parts: Sequence[SpeakerPart],
        result: DigestResult,
        language: str,
    ) -> None:
        """Ask about every part first, then store: a failed call stores nothing.

        Memories and summaries are written in the conversation's `language`
        ("de"; '' unknown: Home Assistant's, the store's default).
        """
        extracted = [
            await self._extract(conversation, part, result, language) for part in parts
        ]
        await self._consolidate(
            [candidate for done in extracted for candidate in done.candidates], result
        )
        for done in extracted:
            if (summary := summary_memory(done)) is None:
                continue
            added = await self._store.add(summary)
            result.summaries[done.scope] = added.item.id
            result.scopes[added.item.id] = added.item.scope

    async def _extract(
        self,
        conversation: PendingConversation,
        part: SpeakerPart,
        result: DigestResult,
        language: str,
    ) -> Extracted:
        """Ask the LLM about one speaker's part; its memories stay theirs.

        A memory goes to the household when the LLM says it is about the
        household; anything else goes to the speaker, whoever it names.
        """
        transcript = part.transcript
        persons = [scope for scope in transcript.speakers if scope != HOUSEHOLD]
        # One speaker per call: no two people of one name to tell apart.
        names = names_for(persons, scope_label(self._hass))
        text = known_query(transcript)
        known = await known_memories(
            self._store,
            persons,
            text=text,
            vector=await async_query_vector(self._embedding, text),
            language=language or None,
        )
        instructions = extraction_prompt(
            transcript,
            names=names,
            known=known,
            day=dt_util.as_local(conversation.started_at),
            # Unknown: the store's default, Home Assistant's language.
            language=language_name(language or self._store.language),
        )
        data = await self._generate(
            EXTRACT_TASK, instructions, EXTRACTION, prepare=extraction_answer
        )
        extracted = read_extraction(
            data,
            part=part,
            names=names,
            source=part_source(conversation, part.messages),
            known_ids={item.id for item in known},
            language=language or None,
        )
        if extracted.dropped:
            result.dropped[part.scope] = (
                result.dropped.get(part.scope, 0) + extracted.dropped
            )
        return extracted

    async def _generate(
        self,
        task_name: str,
        instructions: str,
        structure: probatio.Schema,
        *,
        prepare: Callable[[Any], Any] | None = None,
    ) -> dict[str, Any]:
        self._asking = True
        try:
            data = await self._ai_task.async_generate(
                task_name=task_name,
                instructions=instructions,
                structure=structure,
                prepare=prepare,
            )
        except AITaskRateLimited as err:
            raise _Retry("rate_limited", until=err.retry_at) from err
        except AITaskUnavailable as err:
            self._set_unavailable(True)
            raise _Retry(
                "unavailable", until=dt_util.utcnow() + UNAVAILABLE_RETRY
            ) from err
        except AITaskFailed as err:
            self._set_unavailable(False)
            reason = (err.translation_placeholders or {}).get("reason", "failed")
            raise _Retry(reason) from err
        finally:
            self._asking = False
        self._set_unavailable(False)
        return data

    def _set_unavailable(self, unavailable: bool) -> None:
        if unavailable == self.unavailable:
            return
        self.unavailable = unavailable
        if unavailable:
            ir.async_create_issue(
                self._hass,
                DOMAIN,
                ISSUE_AI_TASK_UNAVAILABLE,
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=ISSUE_AI_TASK_UNAVAILABLE,
            )
        else:
            ir.async_delete_issue(self._hass, DOMAIN, ISSUE_AI_TASK_UNAVAILABLE)
        for listener in list(self._listeners):
            listener()

    async def _consolidate(
        self, candidates: Sequence[Candidate], result: DigestResult
    ) -> None:
        """Fold the candidates into the store, asking about the unclear pairs."""

        async def embed(text: str) -> Vector | None:
            return await async_query_vector(self._embedding, text)

        consolidator = Consolidator(
            self._store,
            embed=embed if self._embedding is not None else None,
        )
        await consolidate(consolidator, candidates, result, resolve=self._resolve)

    async def _resolve(self, asks: Sequence[Plan]) -> dict[int, Action]:
        """One structured question for every pair the rules could not decide."""
        data = await self._generate(RESOLVE_TASK, question(asks), RESOLUTION)
        return read_resolutions(data, asks)
