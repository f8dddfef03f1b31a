"""The reading measure's pairs: every language's file, and only meaning links each pair.

`languages/reading_pairs/<code>.tsv` holds 24 spoken questions with the
memories that answer them. The measure asks whether a model places each
question nearest its own memory; if a pair shared a word, a model that
cannot read the language would still find it by the word. So the test
analyses both sides as the keyword search does (`query_terms`,
`index_terms`) and allows only the people in them to be shared.
"""

from __future__ import annotations

import pytest

from custom_components.memory.engine.languages import (
    PARAPHRASES,
    index_terms,
    paraphrase_pairs,
    query_terms,
)

PAIRS = 24
# Every language the keyword analysis knows by name, and Chinese, Japanese
# and Korean (searched by character pairs).
LANGUAGES = [
    "da",
    "de",
    "en",
    "es",
    "fi",
    "fr",
    "it",
    "ja",
    "ko",
    "nl",
    "no",
    "pl",
    "pt",
    "ru",
    "sv",
    "zh",
]
# The people of the pairs, as each language writes them: Sam, Nora, Felix
# and the grandfather, whom most languages call by one word only.
PEOPLE = {
    "da": "sam sams nora noras felix morfar",
    "de": "sam nora noras felix",
    "en": "sam nora felix",
    "es": "sam nora felix",
    "fi": "sam samin samilta nora noran felix ukki",
    "fr": "sam nora felix",
    "it": "sam nora felix nonno",
    "ja": "サム ノーラ フェリックス おじいちゃん",
    "ko": "샘 노라 펠릭스 할아버지",
    "nl": "sam sams nora noras felix",
    "no": "sam nora felix bestefar",
    "pl": "sam sama samowi nora norę nory felix felixa dziadek",
    "pt": "sam nora felix avô",
    "ru": "сэм сэма сэму нора феликс феликса феликсу дедушка",
    "sv": "sam sams nora noras felix morfar",
    "zh": "萨姆 诺拉 费利克斯 爷爷",
}
CJK = frozenset({"ja", "ko", "zh"})


def people_terms(code: str) -> set[str]:
    """Return the analysed terms of the people's names (CJK: their characters)."""
    if code in CJK:
        return set("".join(PEOPLE[code].split()))
    return set(index_terms(PEOPLE[code], code).split())


def test_every_language_has_its_pairs() -> None:
    """16 languages, 24 pairs each, none empty; a tag finds its language."""
    assert sorted(PARAPHRASES) == sorted(LANGUAGES)
    for code in LANGUAGES:
        pairs = paraphrase_pairs(code)
        assert len(pairs) == PAIRS, code
        assert all(question and memory for question, memory in pairs)
        assert len({question for question, _m in pairs}) == PAIRS
    assert paraphrase_pairs("de-DE") == PARAPHRASES["de"]
    assert paraphrase_pairs("nb") == PARAPHRASES["no"]
    assert paraphrase_pairs("tlh") == ()


@pytest.mark.parametrize("code", LANGUAGES)
def test_only_the_people_link_a_question_to_its_memory(code: str) -> None:
    """No analysed term but a person's name is on both sides of a pair."""
    names = people_terms(code)
    for question, memory in paraphrase_pairs(code):
        held = set(index_terms(memory, code).split())
        shared = set(query_terms(question, code)) & held
        if code in CJK:
            # A name's character pair, or a name with its particle ("サムは").
            shared = {term for term in shared if not set(term) & names}
        else:
            shared -= names
        assert not shared, (code, question, memory, shared)
