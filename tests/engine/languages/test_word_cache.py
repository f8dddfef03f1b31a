"""The per-word cache of the index analysis changes no text's terms.

`analysis._terms` with the language's own stop words (each word looked up
in `_token_caches`) must give what an explicit `stops` gives, every word
analysed anew: every text of the household set (memories, questions,
paraphrases, each in its own language and in every other), then made
harder (upper case, apostrophes, numbers, a word over `MAX_CACHED_TOKEN`,
CJK mixed in), analysed with a cold cache, a warm one and one that
overflowed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_components.memory.engine.languages import analysis
from custom_components.memory.engine.languages.words import stop_words

_HOUSEHOLD = Path(__file__).parents[3] / "bench" / "data" / "household"
_EXTRA = (
    "L'eau de l'école, dell'acqua, Leo's bike, don't DON'T won\u2019t",
    "Donaudampfschifffahrtsgesellschaftskapitänsmützenhalterung 2024 b12",
    "Geburtstagsfeier am 14. März, Mülltonnen_Abfuhr 07:30 Uhr",
    "我女儿的生日是五月 Mia's Geburtstag 生日 ok",
    "ÉCOLE Ärger ÄRGER ﬁsh ς 𝐁old",
    "",
    "   ...   ",
)


def _texts() -> list[str]:
    texts = list(_EXTRA)
    for path in sorted(_HOUSEHOLD.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts.extend(
                record[field]
                for field in ("memory", "question", "paraphrase")
                if isinstance(record.get(field), str)
            )
    return texts + [text.upper() for text in texts]


_CODES = sorted(
    {path.stem for path in _HOUSEHOLD.glob("*.jsonl")} | {"no", "fi", "ru", "xx"}
)


def _uncached(text: str, code: str) -> tuple[list[str], list[str]]:
    tails: list[str] = []
    # An explicit `stops` takes the word-by-word loop, no cache.
    words = analysis._terms(text, code, tails=tails, stops=stop_words(code))
    return words, tails


def _cached(text: str, code: str) -> tuple[list[str], list[str]]:
    tails: list[str] = []
    words = analysis._terms(text, code, tails=tails)
    return words, tails


@pytest.mark.parametrize("code", _CODES)
def test_cached_analysis_equals_uncached(code: str) -> None:
    """Cold, warm and overflowing caches give the same terms and tails."""
    texts = _texts()
    assert len(texts) > 1000
    analysis._token_caches.clear()
    cold = [_cached(text, code) for text in texts]
    warm = [_cached(text, code) for text in texts]
    expected = [_uncached(text, code) for text in texts]
    assert cold == expected
    assert warm == expected


def test_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past TOKEN_CACHE words the caches start afresh; terms stay the same."""
    monkeypatch.setattr(analysis, "TOKEN_CACHE", 50)
    analysis._token_caches.clear()
    analysis._cached_count[0] = 0
    texts = _texts()[:400]
    for code in ("de", "en", "fr"):
        for text in texts:
            assert _cached(text, code) == _uncached(text, code)
            held = sum(len(cache) for cache in analysis._token_caches.values())
            assert held <= 50
    assert all(
        len(token) <= analysis.MAX_CACHED_TOKEN and not token.isdecimal()
        for cache in analysis._token_caches.values()
        for token in cache
    )
