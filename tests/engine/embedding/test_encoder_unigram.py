"""The compact Unigram tokenizer gives the `tokenizers` library's ids exactly.

Texts: every sentence template and list value of Home Assistant's intents
(some 60 languages and a dozen scripts, from the `home_assistant_intents`
package Home Assistant depends on), plus edge cases: characters no piece
covers, runs of them, emoji, empty text, long texts cut by truncation.
"""

from __future__ import annotations

import json
from pathlib import Path
import random

import home_assistant_intents
import pytest
from tokenizers import Tokenizer, models

from custom_components.memory.engine.embedding.model.unigram import (
    UnigramError,
    UnigramTokenizer,
)
from tests.tiny_multilingual import unigram_tokenizer

INTENTS = Path(home_assistant_intents.__file__).parent / "data"


def _strings(node: object, out: list[str]) -> list[str]:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, dict):
        for value in node.values():
            _strings(value, out)
    elif isinstance(node, list):
        for value in node:
            _strings(value, out)
    return out


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """All strings of the intents data, in a fixed order."""
    texts: list[str] = []
    for path in sorted(INTENTS.glob("*.json")):
        _strings(json.loads(path.read_text(encoding="utf-8")), texts)
    assert len(texts) > 20_000
    return texts


@pytest.fixture(scope="module")
def trained(
    corpus: list[str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str]]:
    """Train a 6,000-piece tokenizer on a third of the texts; return it and all texts."""
    rng = random.Random(4)
    training = [t for t in corpus if rng.random() < 0.3]
    tokenizer = unigram_tokenizer(training, vocab_size=6000)
    path = tmp_path_factory.mktemp("unigram") / "tokenizer.json"
    tokenizer.save(str(path))
    edge = [
        "",
        " ",
        "Ünïcödé ﬁne ＦＵＬＬＷＩＤＴＨ",  # the normaliser's work (NFKC)
        "🙂🙂 emoji 🏠 and ☃ snow",  # no piece covers these: fused <unk>
        "ⴰⵣⵓⵍ ᏣᎳᎩ ꦧꦱꦗꦮ",  # scripts absent from the training data
        "query: Wann ist Leos Geburtstagsfeier?",
        "a" * 300,
    ]
    return path, [*corpus, *edge]


def test_ids_equal_the_librarys(trained: tuple[Path, list[str]]) -> None:
    """Same ids as tokenizers' Unigram for every text (with <s> … </s>)."""
    path, texts = trained
    library = Tokenizer.from_file(str(path))
    library.no_padding()
    compact = UnigramTokenizer(path)

    expected = [e.ids for e in library.encode_batch(texts)]
    got = compact.encode_batch_ids(texts)

    mismatches = [t for t, a, b in zip(texts, got, expected, strict=True) if a != b]
    assert mismatches == []
    unk = [ids for ids in got if 3 in ids]
    assert unk  # unknown characters did occur
    assert all(ids[0] == 0 and ids[-1] == 2 for ids in got)


def test_truncation_keeps_the_special_tokens(trained: tuple[Path, list[str]]) -> None:
    """Truncated like the library: the text is cut, <s> and </s> stay."""
    path, texts = trained
    library = Tokenizer.from_file(str(path))
    library.no_padding()
    library.enable_truncation(max_length=12)
    compact = UnigramTokenizer(path)
    compact.enable_truncation(12)
    sample = texts[::37]
    got = compact.encode_batch_ids(sample)
    assert got == [e.ids for e in library.encode_batch(sample)]
    assert max(len(ids) for ids in got) == 12


def test_other_tokenizers_are_left_to_the_library(tmp_path: Path) -> None:
    """WordPiece, byte fallback or a damaged file: UnigramError, never a guess."""
    wordpiece = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    wordpiece.save(str(tmp_path / "wordpiece.json"))
    fallback = Tokenizer(models.Unigram([("<unk>", 0.0), ("a", -1.0)], 0, True))
    fallback.save(str(tmp_path / "fallback.json"))
    (tmp_path / "broken.json").write_text('{"model": {"vocab": [["a", -1.0]', "utf-8")
    for name in ("wordpiece.json", "fallback.json", "broken.json"):
        with pytest.raises(UnigramError):
            UnigramTokenizer(tmp_path / name)


def test_ties_resolve_as_in_the_library(tmp_path: Path) -> None:
    """Equal-scoring segmentations: the library keeps the first one found."""
    vocab = [
        ("<s>", 0.0),
        ("<pad>", 0.0),
        ("</s>", 0.0),
        ("<unk>", 0.0),
        ("▁", -1.0),
        ("▁a", -1.0),
        ("b", -1.0),
        ("▁ab", -2.0),  # = "▁a" + "b"
        ("a", -1.0),
        ("ab", -1.0),  # "▁" + "ab" ties with "▁ab" and "▁a" + "b"
        ("c", -0.5),
        ("bc", -1.5),  # "b" + "c" ties with "bc"
    ]
    tokenizer = unigram_tokenizer(["ab abc"], vocab_size=20)
    tokenizer.model = models.Unigram(vocab, unk_id=3, byte_fallback=False)
    path = tmp_path / "tokenizer.json"
    tokenizer.save(str(path))
    texts = ["ab", "abc", "ab ab", "a b c", "abcabc"]
    library = [e.ids for e in Tokenizer.from_file(str(path)).encode_batch(texts)]
    assert UnigramTokenizer(path).encode_batch_ids(texts) == library


def test_a_special_token_after_the_pieces_stays_out_of_the_library(
    trained: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """XLM-R lists <mask> after its 250k pieces: the library still gets four.

    Handing the library every piece up to the highest special id would build
    its large trie for the real vocabulary (about 170 MB).
    """
    path, texts = trained
    data = json.loads(path.read_text(encoding="utf-8"))
    mask_id = len(data["model"]["vocab"])
    data["model"]["vocab"].append(["<mask>", 0.0])
    data["added_tokens"].append(
        {
            "id": mask_id,
            "content": "<mask>",
            "single_word": False,
            "lstrip": True,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
    )
    with_mask = tmp_path / "tokenizer.json"
    with_mask.write_text(json.dumps(data), encoding="utf-8")

    compact = UnigramTokenizer(with_mask)

    assert compact.library_pieces == 4
    assert len(compact.ids) == mask_id + 1
    library = Tokenizer.from_file(str(with_mask))
    sample = texts[::53]
    assert compact.encode_batch_ids(sample) == [
        e.ids for e in library.encode_batch(sample)
    ]
