"""A turn's memory block across a conversation: follow-ups, memories that stay, "Earlier".

Real stores (keyword-only unless a test needs vectors) and the real
conversation log; the block is read as the agent would read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
import re
import time

import pytest

from custom_components.memory.engine import (
    HOUSEHOLD,
    ConversationInfo,
    ConversationLog,
    MemoryItem,
    MemoryStore,
    MemoryType,
    MessageRole,
    NewMemory,
    NewMessage,
    Origin,
    SearchHit,
    SearchQuery,
    Source,
)
from custom_components.memory.engine.models import Vector
from custom_components.memory.engine.recall.turn import (
    EARLIER_SHARE,
    FENCE_CLOSE,
    FENCE_OPEN,
    KEEP_TURNS,
    MAX_KEPT,
    NOTHING,
    PART_EARLIER,
    PART_FOLLOW_UP,
    PART_KEPT,
    PART_PROFILE,
    PART_SEARCH,
    ConversationState,
    ConversationStates,
    Recalled,
    RecallSettings,
    Speaker,
    Turn,
    recall_turn,
    render,
)
from custom_components.memory.engine.text import estimate_tokens
from tests.engine.conftest import FakeClock, StoreFactory, memory, unit, vector

ANNA = "person.anna"
BEN = "person.ben"
KITCHEN = "device-kitchen"
HALL = "device-hall"
SATELLITE = Speaker(
    scopes=(HOUSEHOLD,),
    device_id=KITCHEN,
    redact=True,
    label=lambda scope: scope.partition(".")[2] or scope,
)
ANNA_SPEAKS = replace(
    SATELLITE, scopes=(HOUSEHOLD, ANNA), person=ANNA, user_id="user-anna", redact=False
)

HOUSE = (
    "Mia is allergic to nuts",
    "Mia's brother Leo is allergic to cats",
    "Mia has football practice on Tuesday at 5",
    "Leo has football practice on Friday at 4",
    "Leo has piano lessons on Wednesday",
    "The wifi password is written under the router",
    "The guest room heating should stay at 19 degrees",
    "The bins go out on Thursday evening",
)


def ids_of(recalled: Recalled) -> list[int]:
    """Return the memory ids of a block, in the order the agent reads them."""
    return [
        int(found) for found in re.findall(r"^#(\d+) ", recalled.prompt, re.MULTILINE)
    ]


class Conversation:
    """Says turns of one conversation the way recall.py gathers them."""

    def __init__(
        self,
        store: MemoryStore,
        clock: FakeClock,
        *,
        speaker: Speaker = SATELLITE,
        settings: RecallSettings | None = None,
        conversation_id: str = "now",
        language: str | None = None,
    ) -> None:
        """Start a conversation with no turn yet."""
        self.store = store
        self.clock = clock
        self.speaker = speaker
        self.settings = settings or RecallSettings()
        self.state = ConversationState()
        self.said: list[str] = []
        self.conversation_id = conversation_id
        self.language = language

    async def say(self, text: str, vector: Vector | None = None) -> Recalled:
        """One user turn; returns its block."""
        recalled = await recall_turn(
            self.store,
            Turn(
                utterance=text,
                earlier=self.said[::-1],
                vector=vector,
                language=self.language,
                conversation_id=self.conversation_id,
                now=datetime.fromtimestamp(self.clock(), UTC),
            ),
            self.speaker,
            self.state,
            self.settings,
        )
        self.said.append(text)
        return recalled


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store holding a household's memories."""
    opened = await store_factory(model=None)
    await opened.add_many([memory(text) for text in HOUSE])
    return opened


async def id_of(store: MemoryStore, text: str) -> int:
    """Return the id of the active memory with this text."""
    found = [
        hit.item.id
        for hit in await store.search(SearchQuery(text="*", limit=50))
        if hit.item.content == text
    ]
    assert found, text
    return found[0]


async def test_single_turn_is_the_search(store: MemoryStore, clock: FakeClock) -> None:
    """A first turn's block is its search's hits, fenced, counted as search."""
    recalled = await Conversation(store, clock).say("What is Mia allergic to?")
    allergy = await id_of(store, "Mia is allergic to nuts")
    assert ids_of(recalled)[0] == allergy
    assert recalled.parts == {PART_SEARCH}
    assert FENCE_OPEN in recalled.prompt
    assert recalled.prompt.endswith(FENCE_CLOSE)
    assert recalled.tokens == estimate_tokens(recalled.prompt)
    assert "Earlier" not in recalled.prompt


async def test_follow_up_finds_what_it_refers_to(
    store: MemoryStore, clock: FakeClock
) -> None:
    """'And Leo?' after a question on football practice finds Leo's practice first."""
    talk = Conversation(store, clock)
    await talk.say("When does Mia have football practice?")
    recalled = await talk.say("And Leo?")
    practice = await id_of(store, "Leo has football practice on Friday at 4")
    assert ids_of(recalled)[0] == practice
    assert PART_FOLLOW_UP in recalled.parts

    alone = Conversation(
        store, clock, settings=RecallSettings(follow_ups=False, keep=False)
    )
    await alone.say("When does Mia have football practice?")
    plain = await alone.say("And Leo?")
    assert PART_FOLLOW_UP not in plain.parts
    # Without the earlier turn "Leo" alone ranks every Leo memory alike.
    assert ids_of(plain) != ids_of(recalled)


async def test_memories_stay_while_the_conversation_carries_on(
    store: MemoryStore, clock: FakeClock
) -> None:
    """The allergy shown on turn 1 stays on the follow-up, with its id, once."""
    talk = Conversation(store, clock, settings=RecallSettings(follow_ups=False))
    first = await talk.say("What is Mia allergic to?")
    allergy = await id_of(store, "Mia is allergic to nuts")
    assert allergy in ids_of(first)
    second = await talk.say("And her brother?")
    brother = await id_of(store, "Mia's brother Leo is allergic to cats")
    shown = ids_of(second)
    assert brother in shown
    assert shown.count(allergy) == 1
    assert PART_KEPT in second.parts
    assert len(shown) == len(set(shown))

    # Off: the allergy is there only if this turn's search finds it.
    off = Conversation(
        store, clock, settings=RecallSettings(keep=False, follow_ups=False)
    )
    await off.say("What is Mia allergic to?")
    again = await off.say("And her brother?")
    assert PART_KEPT not in again.parts
    assert allergy not in ids_of(again)


async def test_a_new_subject_drops_what_stayed(
    store: MemoryStore, clock: FakeClock
) -> None:
    """'What's the wifi password?' after the allergy keeps no allergy note."""
    talk = Conversation(store, clock)
    await talk.say("What is Mia allergic to?")
    recalled = await talk.say("Where is the wifi password written?")
    allergy = await id_of(store, "Mia is allergic to nuts")
    wifi = await id_of(store, "The wifi password is written under the router")
    assert ids_of(recalled)[0] == wifi
    assert allergy not in ids_of(recalled)
    assert PART_KEPT not in recalled.parts
    assert PART_FOLLOW_UP not in recalled.parts
    assert allergy not in talk.state.kept


async def test_kept_memories_fade_and_forgotten_ones_go(
    store: MemoryStore, clock: FakeClock
) -> None:
    """A kept memory goes KEEP_TURNS turns after it was last found, or when forgotten."""
    talk = Conversation(store, clock, settings=RecallSettings(follow_ups=False))
    await talk.say("Where is the wifi password written?")
    wifi = await id_of(store, "The wifi password is written under the router")
    seen = [wifi in ids_of(await talk.say("and then?")) for _ in range(KEEP_TURNS + 1)]
    assert seen == [True] * KEEP_TURNS + [False]

    talk = Conversation(store, clock, settings=RecallSettings(follow_ups=False))
    await talk.say("Where is the wifi password written?")
    await store.forget([wifi])
    assert wifi not in ids_of(await talk.say("and then?"))
    assert wifi not in talk.state.kept


async def test_kept_memories_are_bounded(store: MemoryStore, clock: FakeClock) -> None:
    """A long conversation keeps at most MAX_KEPT memories, the newest."""
    talk = Conversation(store, clock, settings=RecallSettings(budget=2000))
    await store.add_many(
        [memory(f"Shelf {n} holds the blue box {n}") for n in range(20)]
    )
    await talk.say("blue box shelf")
    assert len(talk.state.kept) <= MAX_KEPT


async def test_follow_up_vector_is_made_of_kept_vectors(
    store_factory: StoreFactory, clock: FakeClock
) -> None:
    """With vectors the follow-up's query vector blends the earlier turn's."""
    store = await store_factory(path=None)
    added = await store.add_many(
        [memory("Anything at all"), memory("Something else")],
        vectors=[vector("a"), vector("b")],
    )
    talk = Conversation(store, clock, settings=RecallSettings(min_score=0.0))
    await talk.say("What is it?", vector=unit(vector("a")))
    assert "What is it?" in talk.state.vectors
    # The follow-up's own vector points at "b"; blended, "a" still counts.
    second = await talk.say("And that one?", vector=unit(vector("b")))
    assert set(ids_of(second)) >= {added[0].item.id, added[1].item.id}
    # Only the vectors a follow-up can still look back at are kept.
    for n in range(6):
        await talk.say(f"And then {n}?", vector=unit(vector(n)))
    assert list(talk.state.vectors) == [f"And then {n}?" for n in range(2, 6)]


async def save_talk(
    log: ConversationLog,
    *,
    conversation_id: str,
    at: datetime,
    scope: str = HOUSEHOLD,
    device_id: str | None = None,
    user_id: str | None = None,
    said: Sequence[tuple[MessageRole, str]] = (),
) -> None:
    """Store an earlier conversation with its messages."""
    info = ConversationInfo(
        conversation_id=conversation_id,
        started_at=at,
        scope=scope,
        device_id=device_id,
        user_id=user_id,
        ended_at=at + timedelta(minutes=1),
    )
    messages = [
        NewMessage(
            role=role,
            content=text,
            created_at=at + timedelta(seconds=n),
            scope=scope,
            device_id=device_id,
            user_id=user_id,
        )
        for n, (role, text) in enumerate(said)
    ]
    await log.save([(None, info, messages)])


async def test_earlier_starts_a_new_conversation(
    store: MemoryStore, clock: FakeClock
) -> None:
    """Anna's conversation of 20 minutes ago opens her next one, and only that."""
    log = ConversationLog(store)
    now = datetime.fromtimestamp(clock(), UTC)
    await save_talk(
        log,
        conversation_id="before",
        at=now - timedelta(minutes=21),
        scope=ANNA,
        user_id="user-anna",
        said=[(MessageRole.USER, "Set the guest room to 19 degrees")],
    )
    summary = await store.add(
        NewMemory(
            content="Anna asked to keep the guest room at 19 degrees.",
            type=MemoryType.SUMMARY,
            scope=ANNA,
            source=Source(origin=Origin.DIGESTION, conversation_id="before"),
        )
    )
    await save_talk(
        log,
        conversation_id="bens",
        at=now - timedelta(minutes=5),
        scope=BEN,
        said=[(MessageRole.USER, "Ben's secret plans for the surprise party")],
    )
    talk = Conversation(store, clock, speaker=ANNA_SPEAKS)
    first = await talk.say("Good morning")
    lines = earlier_lines(first)
    assert len(lines) == 1
    assert "20 minutes ago" in lines[0] or "21 minutes ago" in lines[0]
    assert "guest room at 19 degrees" in lines[0]
    assert "surprise party" not in first.prompt
    assert PART_EARLIER in first.parts
    assert summary.item.id not in ids_of(first)
    # Only the first turn.
    second = await talk.say("What about the heating in the guest room?")
    assert "Earlier" not in second.prompt

    # Off.
    off = Conversation(
        store,
        clock,
        speaker=ANNA_SPEAKS,
        settings=RecallSettings(earlier=timedelta(0)),
        conversation_id="other",
    )
    assert "Earlier" not in (await off.say("Good morning")).prompt
    # The window ends.
    short = Conversation(
        store,
        clock,
        speaker=ANNA_SPEAKS,
        settings=RecallSettings(earlier=timedelta(minutes=10)),
        conversation_id="third",
    )
    assert "Earlier" not in (await short.say("Good morning")).prompt


async def test_earlier_of_a_satellite_is_its_own(
    store: MemoryStore, clock: FakeClock
) -> None:
    """A satellite nobody is identified at sees its own household talks only."""
    log = ConversationLog(store)
    now = datetime.fromtimestamp(clock(), UTC)
    await save_talk(
        log,
        conversation_id="kitchen",
        at=now - timedelta(minutes=30),
        device_id=KITCHEN,
        said=[
            (MessageRole.USER, "Start the dishwasher"),
            (MessageRole.ASSISTANT, "Started the dishwasher"),
        ],
    )
    await save_talk(
        log,
        conversation_id="hall",
        at=now - timedelta(minutes=10),
        device_id=HALL,
        said=[(MessageRole.USER, "Open the garage door")],
    )
    await save_talk(
        log,
        conversation_id="anna",
        at=now - timedelta(minutes=5),
        scope=ANNA,
        device_id=KITCHEN,
        said=[(MessageRole.USER, "Anna's private diary note")],
    )
    recalled = await Conversation(store, clock).say("Hello")
    assert "dishwasher" in recalled.prompt
    assert "garage" not in recalled.prompt
    assert "diary" not in recalled.prompt


async def garden_talks(
    store: MemoryStore, clock: FakeClock, count: int, *, words: int
) -> None:
    """Save `count` kitchen talks of ten minutes ago and before, long ones."""
    log = ConversationLog(store)
    now = datetime.fromtimestamp(clock(), UTC)
    for n in range(count):
        await save_talk(
            log,
            conversation_id=f"talk-{n}",
            at=now - timedelta(minutes=10 + n),
            device_id=KITCHEN,
            said=[(MessageRole.USER, f"Talk number {n} about the garden " * words)],
        )


def earlier_lines(recalled: Recalled) -> list[str]:
    """Return the block's "Earlier" lines."""
    return [line for line in recalled.prompt.splitlines() if line.startswith("Earlier")]


async def test_earlier_keeps_to_its_share_of_the_budget(
    store: MemoryStore, clock: FakeClock
) -> None:
    """However many talks there are, "Earlier" takes at most its share."""
    await garden_talks(store, clock, 6, words=5)
    settings = RecallSettings(budget=200)
    recalled = await Conversation(store, clock, settings=settings).say("the bins")
    earlier = earlier_lines(recalled)
    assert earlier
    assert sum(estimate_tokens(line + "\n") for line in earlier) <= int(
        200 * EARLIER_SHARE
    )
    assert recalled.tokens <= 200
    assert await id_of(store, "The bins go out on Thursday evening") in ids_of(recalled)


async def test_earlier_lines_stop_when_their_room_is_spent(
    store: MemoryStore, clock: FakeClock
) -> None:
    """A tight budget holds the newest talks; the next is left out, not cut to nothing."""
    await garden_talks(store, clock, 3, words=8)
    settings = RecallSettings(budget=150, earlier=timedelta(hours=1))
    recalled = await Conversation(store, clock, settings=settings).say("Hello")
    earlier = earlier_lines(recalled)
    assert ["Talk number 0" in earlier[0], "Talk number 1" in earlier[1]] == [
        True,
        True,
    ]
    assert len(earlier) == 2


async def test_profiles_come_first_and_nothing_is_nothing(
    store: MemoryStore, clock: FakeClock
) -> None:
    """A profile opens the block; a zero budget or no match gives nothing."""
    await store.add(memory("A family of four.", type=MemoryType.PROFILE))
    talk = Conversation(store, clock, settings=RecallSettings(earlier=timedelta(0)))
    recalled = await talk.say("")
    assert recalled.parts == {PART_PROFILE}
    assert recalled.prompt.splitlines()[2].startswith("Profile (household)")
    off = Conversation(store, clock, settings=RecallSettings(budget=0))
    assert await off.say("What is Mia allergic to?") is NOTHING
    assert render([], [], 300, str) is NOTHING


async def test_secret_rules_are_applied(store: MemoryStore, clock: FakeClock) -> None:
    """`found` and `shown` (the speaker's secret rules) shape what is shown."""
    hidden: list[int] = []

    def found(
        hits: list[SearchHit], query: str, language: str | None
    ) -> list[SearchHit]:
        assert "football" in query  # the follow-up's words count too
        assert language == "en"  # the turn's language, for the query's words
        held = [
            hit
            for hit in hits
            if "football" not in hit.item.content or "Mia" in hit.item.content
        ]
        hidden.extend(hit.item.id for hit in held)
        return [hit for hit in hits if hit not in held]

    def shown(item: MemoryItem) -> MemoryItem:
        return replace(item, content="[redacted]")

    talk = Conversation(store, clock)
    await talk.say("When does Mia have football practice?")
    before = set(talk.state.kept)
    recalled = await recall_turn(
        store,
        Turn(
            utterance="And Leo?",
            earlier=talk.said[::-1],
            language="en",
            now=datetime.fromtimestamp(clock(), UTC),
        ),
        replace(SATELLITE, found=found, shown=shown),
        talk.state,
        RecallSettings(min_score=0.0),
    )
    assert set(hidden) - before
    # What `found` held back this turn is not shown, unless an earlier turn
    # found it (it stays, through `shown`).
    assert not (set(hidden) - before) & set(ids_of(recalled))
    # The kept memory from turn 1 is shown through `shown`.
    assert "[redacted]" in recalled.prompt


def test_conversation_states_are_bounded() -> None:
    """States are kept per conversation, the oldest and idle ones dropped."""
    states = ConversationStates(size=2, idle=60)
    first = states.get("a")
    assert states.get("a") is first
    states.get("b")
    states.get("c")
    assert len(states) == 2
    assert states.get("a") is not first
    assert states.get(None) is not states.get(None)
    idle = ConversationStates(idle=0.0)
    kept = idle.get("x")
    kept.touched = time.monotonic() - 1
    idle.get("y")
    assert len(idle) == 1
    idle.clear()
    assert len(idle) == 0
