"""Follow-ups: which utterances carry on, how much earlier turns weigh, and their search.

The search tests use a real keyword-only store: the earlier turns' words
rank what the current words find, and drive the match only when those find
nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from custom_components.memory.engine import InvalidInputError, MemoryStore, SearchQuery
from custom_components.memory.engine.recall.followup_words import OPENERS, REFERS
from custom_components.memory.engine.recall.followups import (
    FADE,
    MAX_EARLIER_TURNS,
    context_vector,
    earlier_weights,
    is_follow_up,
)
from custom_components.memory.engine.search.memories import MAX_EARLIER
from tests.engine.conftest import StoreFactory, memory, unit, vector

CUED = [
    ("en", "What is Mia allergic to?", "And her brother?"),
    ("en", "When does Mia have football practice?", "What about Leo?"),
    ("de", "Wie warm soll das Gästezimmer sein?", "Und im Winter?"),
    ("de", "Wann ist das Training von Mia?", "Was ist mit Leo?"),
    ("fr", "À quelle heure Mia a-t-elle piscine ?", "Et demain ?"),
    ("fr", "Qu'est-ce que Mia n'aime pas manger ?", "Qu'en est-il de Léo ?"),
    ("es", "¿A qué es alérgica Mia?", "¿Y su hermano?"),
    ("nl", "Wanneer heeft Mia zwemles?", "En Leo?"),
    ("it", "A cosa è allergica Mia?", "E suo fratello?"),
    ("pt", "A que é que a Mia é alérgica?", "E o irmão dela?"),
    ("sv", "När har Mia simning?", "Och Leo?"),
    ("da", "Hvornår har Mia svømning?", "Hvad med Leo?"),
    ("no", "Når har Mia svømming?", "Hva med Leo?"),
    ("fi", "Milloin Mialla on uinti?", "Entä Leolla?"),
    ("pl", "Na co Mia jest uczulona?", "A co z Leo?"),
    ("ru", "На что у Мии аллергия?", "А у её брата?"),
]

NEW_SUBJECT = [
    ("en", "What is Mia allergic to?", "Where is the wifi password written?"),
    (
        "en",
        "When does Mia have football practice?",
        "Turn on the kitchen lights please",
    ),
    ("de", "Wie warm soll das Gästezimmer sein?", "Wann wird der Restmüll abgeholt?"),
    ("fr", "À quelle heure Mia a-t-elle piscine ?", "Quel est le code du portail ?"),
]


@pytest.mark.parametrize(("language", "before", "now"), CUED)
def test_cued_follow_ups(language: str, before: str, now: str) -> None:
    """An opener or a word that refers back carries on, in each language."""
    assert is_follow_up(now, [before], [language, "en"])


@pytest.mark.parametrize(("language", "before", "now"), NEW_SUBJECT)
def test_a_new_subject_stands_alone(language: str, before: str, now: str) -> None:
    """A complete question on another subject is no follow-up."""
    assert not is_follow_up(now, [before], [language, "en"])


def test_shared_words_and_short_turns_carry_on() -> None:
    """A shared content word, or a turn of one content word, carries on."""
    assert is_follow_up(
        "Does the football practice start at five?",
        ["When does Mia have football practice?"],
        ["en"],
    )
    assert is_follow_up("Tomorrow?", ["When do the bins go out?"], ["en"])
    assert is_follow_up("Danke!", ["Wann kommt der Müll?"], ["de"])


def test_nothing_to_follow() -> None:
    """No earlier turn, or no words: nothing to carry on from."""
    assert not is_follow_up("And her brother?", [], ["en"])
    assert not is_follow_up("?!", ["What is Mia allergic to?"], ["en"])


def test_word_lists_cover_thirteen_languages() -> None:
    """Every analysed language has openers and back-references, in lower case."""
    languages = {
        "en",
        "de",
        "nl",
        "fr",
        "es",
        "it",
        "pt",
        "sv",
        "da",
        "no",
        "fi",
        "pl",
        "ru",
    }
    assert set(OPENERS) == set(REFERS) == languages
    for phrases in OPENERS.values():
        assert all(word == word.lower() for phrase in phrases for word in phrase)
    for words in REFERS.values():
        assert all(word == word.lower() for word in words)


def test_earlier_weights_fade() -> None:
    """Newest first: half, a quarter, an eighth; never more than three turns."""
    assert earlier_weights(2) == [FADE, FADE**2]
    assert len(earlier_weights(10)) == MAX_EARLIER_TURNS
    assert earlier_weights(0) == []


def test_context_vector_blends_what_recall_kept() -> None:
    """The blend is a unit vector leaning to now; missing or odd vectors are skipped."""
    now, before = unit(vector("now")), unit(vector("before"))
    blended = context_vector(now, [before, None, unit(vector("x", dim=8))])
    assert float(np.linalg.norm(blended)) == pytest.approx(1.0, abs=1e-5)
    assert float(blended @ now) > float(blended @ before) > float(now @ before)
    assert np.allclose(context_vector(now, [None]), now)
    zero = np.zeros_like(now)
    assert np.allclose(context_vector(zero, []), zero)


WINTER = (
    "The guest room heating should stay at 19 degrees",
    "The living room heating is set to 21 degrees in winter",
    "The garden hose goes into the shed in winter",
    "The wifi password is written under the router",
)


@pytest.fixture
async def store(store_factory: StoreFactory) -> MemoryStore:
    """Open a keyword-only store with the winter notes."""
    opened = await store_factory(model=None)
    await opened.add_many([memory(text) for text in WINTER])
    return opened


async def test_earlier_words_rank_what_the_current_words_find(
    store: MemoryStore,
) -> None:
    """'And in winter?' after the guest room: the winter heating first."""
    alone = await store.search(SearchQuery(text="And in winter?"))
    assert alone[0].item.content == WINTER[2]
    follow = await store.search(
        SearchQuery(
            text="And in winter?",
            earlier=(("How warm should the guest room be?", FADE),),
        )
    )
    assert [hit.item.content for hit in follow] == [WINTER[1], WINTER[2]]
    # The current words still decide: the wifi question keeps its own answer.
    wifi = await store.search(
        SearchQuery(
            text="Where is the wifi password?",
            earlier=(("How warm should the guest room be?", FADE),),
        )
    )
    assert wifi[0].item.content == WINTER[3]


async def test_earlier_words_drive_when_the_current_ones_find_nothing(
    store: MemoryStore,
) -> None:
    """'What about tomorrow?' finds nothing alone; the earlier turn's words do."""
    assert await store.search(SearchQuery(text="What about tomorrow?")) == []
    found = await store.search(
        SearchQuery(
            text="What about tomorrow?",
            earlier=(("Where does the garden hose go?", FADE),),
        )
    )
    assert found[0].item.content == WINTER[2]
    # The newest earlier turn that finds something drives; an older one only
    # ranks what it found.
    both = await store.search(
        SearchQuery(
            text="What about tomorrow?",
            earlier=(
                ("Where does the garden hose go?", FADE),
                ("Is the wifi password written somewhere?", FADE**2),
            ),
        )
    )
    assert [hit.item.content for hit in both] == [WINTER[2]]


@pytest.mark.parametrize(
    "earlier",
    [
        (("x", 0.0),),
        (("x", 1.5),),
        (("", 0.5),),
        tuple(("x", 0.5) for _ in range(MAX_EARLIER + 1)),
    ],
)
async def test_earlier_turns_are_checked(
    store: MemoryStore, earlier: tuple[tuple[str, float], ...]
) -> None:
    """A weight outside (0, 1], an empty text or too many turns are refused."""
    with pytest.raises(InvalidInputError):
        await store.search(SearchQuery(text="winter", earlier=earlier))
