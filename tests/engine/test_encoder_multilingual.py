"""The built-in encoder on a model of multilingual-e5-small's family.

The real weights cannot be part of the tests (470 MB), so a tiny model of the
same kind is generated (`tests/tiny_multilingual.py`): a BERT with an XLM-R
style Unigram tokenizer, tensors named without the `bert.` prefix. The
encoder's vectors are checked against the textbook float64 BERT of
`test_encoder.py`, fed with token ids the test computes itself, including
E5's "query: " / "passage: " prefixes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from tokenizers import Tokenizer

from custom_components.memory.engine.encoder import BertEncoder
from custom_components.memory.engine.encoder_files import EmbeddingRows, TensorFile
from custom_components.memory.engine.model_files import (
    MULTILINGUAL_E5_SMALL,
    ModelSpec,
    default_model_for,
    install_from_folder,
    missing_files,
)
from custom_components.memory.engine.providers import LocalProvider
from tests.engine.test_encoder import _reference
from tests.tiny_multilingual import write_tiny_e5

TEXTS = [
    "Wann ist Leos Geburtstagsfeier?",
    "Mia a cours de natation le mercredi.",
    "¿Qué no puede comer Mia?",
    "垃圾车星期二来。",
    "",
    (
        "De stookolietank is in maart bijgevuld, en de restmülltonne wordt op "
        "dinsdag opgehaald; dit is een lange tekst die de grens van 48 tokens "
        "van dit kleine model zeker overschrijdt."
    ),
]

type Tiny = tuple[dict[str, npt.NDArray[np.float32]], dict[str, Any], ModelSpec]


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    """Generate the model in `tmp_path`."""
    return write_tiny_e5(tmp_path)


def _ids(folder: Path, text: str, max_len: int) -> list[int]:
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_len)
    return tokenizer.encode(text).ids


def test_spec_is_e5_small() -> None:
    """The pinned model: E5's prefixes, mean pooling, normalised, 384 wide."""
    spec = MULTILINGUAL_E5_SMALL
    assert (spec.query_prefix, spec.passage_prefix) == ("query: ", "passage: ")
    assert (spec.pooling, spec.normalize, spec.dims) == ("mean", True, 384)
    assert [f.path for f in spec.files] == [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
    ]
    assert all(f.pinned for f in spec.files)
    assert spec.file("model.safetensors").size == 470_641_600


def test_queries_and_passages_match_the_reference(tmp_path: Path, tiny: Tiny) -> None:
    """Token ids, positions from 0, segment 0, mean pooling and the prefixes."""
    tensors, config, spec = tiny
    encoder = BertEncoder(tmp_path, spec, batch_size=4)

    queries = encoder.encode(TEXTS, query=True)
    passages = encoder.encode(TEXTS)

    assert queries.shape == passages.shape == (len(TEXTS), 32)
    for got_q, got_p, text in zip(queries, passages, TEXTS, strict=True):
        for got, prefix in ((got_q, "query: "), (got_p, "passage: ")):
            ids = _ids(tmp_path, prefix + text, spec.max_seq_length)
            # XLM-R's special tokens frame every text; nothing is unknown.
            assert ids[0] == 0
            assert ids[-1] == 2
            assert 3 not in ids[1:-1] or text == TEXTS[3]
            assert len(ids) <= spec.max_seq_length
            expected = _reference(ids, tensors, config, pooling="mean", normalize=True)
            np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-5)
        # The prefix matters: the same text embeds differently as a question.
        assert float(got_q @ got_p) < 0.9999
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert len(_ids(tmp_path, "passage: " + TEXTS[-1], 512)) > spec.max_seq_length
    np.testing.assert_allclose(
        encoder.encode_one(TEXTS[0], query=True), queries[0], atol=1e-6
    )


def test_a_folder_without_a_spec_has_no_prefixes(tmp_path: Path, tiny: Tiny) -> None:
    """Prefixes belong to the pinned spec; a bare folder embeds the text as given."""
    tensors, config, _spec = tiny
    bare = BertEncoder(tmp_path)
    ids = _ids(tmp_path, TEXTS[1], 64)
    expected = _reference(ids, tensors, config, pooling="mean", normalize=False)
    np.testing.assert_allclose(
        bare.encode_one(TEXTS[1]), expected, rtol=2e-4, atol=2e-5
    )
    np.testing.assert_array_equal(
        bare.encode_one(TEXTS[1], query=True), bare.encode_one(TEXTS[1])
    )


async def test_provider_passes_query_through(tmp_path: Path, tiny: Tiny) -> None:
    """The built-in provider embeds searches as queries, memories as passages."""
    _tensors, _config, spec = tiny
    encoder = BertEncoder(tmp_path, spec)
    provider = LocalProvider(encoder, model=spec.key)

    as_query = await provider.embed([TEXTS[2]], query=True)
    as_passage = await provider.embed([TEXTS[2]])

    np.testing.assert_allclose(
        as_query[0], encoder.encode_one(TEXTS[2], query=True), atol=1e-6
    )
    np.testing.assert_allclose(as_passage[0], encoder.encode_one(TEXTS[2]), atol=1e-6)
    assert not np.allclose(as_query, as_passage)
    await provider.close()


def test_installs_from_a_local_folder(tmp_path: Path, tiny: Tiny) -> None:
    """Without internet: the model's files are checked, copied and load."""
    _tensors, _config, spec = tiny
    target = tmp_path / "installed"
    install_from_folder(spec, tmp_path, target)
    assert missing_files(spec, target) == []
    np.testing.assert_array_equal(
        BertEncoder(target, spec).encode_one(TEXTS[0], query=True),
        BertEncoder(tmp_path, spec).encode_one(TEXTS[0], query=True),
    )


@pytest.mark.parametrize(
    ("language", "model"),
    [
        ("en", "all-MiniLM-L6-v2"),
        ("en-GB", "all-MiniLM-L6-v2"),
        ("EN_us", "all-MiniLM-L6-v2"),
        (None, "all-MiniLM-L6-v2"),
        ("", "all-MiniLM-L6-v2"),
        ("de", "multilingual-e5-small"),
        ("nl-BE", "multilingual-e5-small"),
        ("zh-Hans", "multilingual-e5-small"),
        ("eo", "multilingual-e5-small"),
    ],
)
def test_default_model_follows_the_language(language: str | None, model: str) -> None:
    """English keeps the small English model; every other language gets E5."""
    assert default_model_for(language) == model


def test_embedding_rows_are_read_from_the_file(tmp_path: Path, tiny: Tiny) -> None:
    """The table is read by rows (not mapped): any order, repeats, runs."""
    tensors, _config, _spec = tiny
    table = tensors["embeddings.word_embeddings.weight"]
    rows = TensorFile(tmp_path / "model.safetensors").rows(
        "embeddings.word_embeddings.weight"
    )
    assert isinstance(rows, EmbeddingRows)
    assert rows.shape == table.shape
    last = len(table) - 1
    ids = np.array([5, 3, 4, 5, 0, last, 4, last - 2, last - 1], dtype=np.int64)
    np.testing.assert_array_equal(rows.take(ids), table[ids])
    assert rows.take(np.array([], dtype=np.int64)).shape == (0, table.shape[1])
    with pytest.raises(IndexError):
        rows.take(np.array([len(table)], dtype=np.int64))
