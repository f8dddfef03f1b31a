"""The near-duplicate measures: keyword overlap and conflicts (no store)."""

from __future__ import annotations

import pytest

from custom_components.memory.engine.digestion.near_duplicates import (
    DEFAULT_THRESHOLDS,
    conflicting,
    content_terms,
    keyword_overlap,
)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        ("The kids go to bed at 8 pm", "The children go to bed at 8 pm", False),
        ("Leo is seven years old", "Leo is 7 years old", False),
        ("The kids go to bed at 8 pm", "The kids go to bed at 9 pm", True),
        ("The fish are fed twice a day", "The fish are fed once a day", True),
        ("Mia likes mushrooms", "Mia does not like mushrooms", True),
        ("Mia likes mushrooms", "Mia doesn't like mushrooms", True),
        ("Piano lessons on Saturday", "Piano lessons on Sunday", True),
        ("Leo's best friend is Sam", "Sam is Leo's best friend", False),
        ("Ben goes out on Tuesdays", "Ben goes out every Tuesday", False),
        ("The dog sleeps inside", "The dog sleeps indoors", False),
    ],
)
def test_conflicting(left: str, right: str, expected: bool) -> None:
    """Numbers, one-sided negations and names on one side only conflict."""
    assert conflicting(left, right, "en") is expected
    assert conflicting(right, left, "en") is expected


def test_keyword_overlap() -> None:
    """Overlap is the Jaccard of stemmed content words."""
    assert keyword_overlap("Mia plays the violin", "Mia plays violin", "en") == 1.0
    # "runs" and "running" share Snowball's stem "run"; "before" is a stop
    # word: {anna, run, work} of {anna, goe, run, work}.
    assert (
        keyword_overlap("Anna runs before work", "Anna goes running before work", "en")
        == 0.75
    )
    assert keyword_overlap("?!", "Mia", "en") == 0.0


def test_keyword_overlap_in_the_texts_language() -> None:
    """Stop words and stems are the language's: a plural meets its singular."""
    left, right = "Les vélos sont dans le garage", "Le vélo est dans le garage"
    assert keyword_overlap(left, right, "fr") == 1.0
    # English analysis keeps "les", "sont", "est" apart: 4 of 7 words shared.
    assert keyword_overlap(left, right, "en") < DEFAULT_THRESHOLDS.keyword
    assert content_terms("Die Fahrräder stehen in der Garage", "de") == {
        "fahrrad",
        "steh",
        "garag",
    }


def test_keyword_overlap_of_texts_in_two_languages() -> None:
    """Each text is analysed in its own language, as the index holds it."""
    german, english = "Die Kinder schwimmen", "The children swim"
    assert "die" in content_terms(german, "en")  # an English word
    assert content_terms(german, "de") == {"kind", "schwimm"}
    assert keyword_overlap(german, english, "de", "en") == keyword_overlap(
        english, german, "en", "de"
    )
    assert keyword_overlap("Leo mag Äpfel", "Leo mag Apfel", "de", "de") == 1.0


@pytest.mark.parametrize(
    ("left", "right", "language", "expected"),
    [
        # Every German noun is capitalised: a plural is still the same name.
        (
            "Die Fahrräder stehen in der Garage",
            "Das Fahrrad steht in der Garage",
            "de",
            False,
        ),
        (
            "Die Fahrräder stehen in der Garage",
            "Die Fahrräder stehen im Keller",
            "de",
            True,
        ),
        (
            "Les vélos de Léa sont au garage",
            "Le vélo de Léa est au garage",
            "fr",
            False,
        ),
        (
            "Les vélos de Léa sont au garage",
            "Les vélos de Hugo sont au garage",
            "fr",
            True,
        ),
    ],
)
def test_conflicting_names_in_the_texts_language(
    left: str, right: str, language: str, *, expected: bool
) -> None:
    """A name on one side only conflicts; its inflections are the same name."""
    assert conflicting(left, right, language) is expected
    assert conflicting(right, left, language) is expected
