"""The near-duplicate measures: keyword overlap and conflicts (no store)."""

from __future__ import annotations

import pytest

from custom_components.memory.engine.near_duplicates import conflicting, keyword_overlap


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
    assert conflicting(left, right) is expected
    assert conflicting(right, left) is expected


def test_keyword_overlap() -> None:
    """Overlap is the Jaccard of stemmed content words."""
    assert keyword_overlap("Mia plays the violin", "Mia plays violin") == 1.0
    assert (
        keyword_overlap("Anna runs before work", "Anna goes running before work") == 0.4
    )
    assert keyword_overlap("?!", "Mia") == 0.0
