"""An upload's body streamed to disk (issue 38): read a piece at a time into python-multipart, each
file part written to a staging folder that becomes the job's, and nothing left behind when the
upload is refused or its connection drops (local_engine/ingestion/jobs.py, ``Staging``)."""

from __future__ import annotations

import hashlib
import http.client
import socket
import time
import tracemalloc
from collections.abc import Iterable, Iterator
from pathlib import Path

import httpx
import pytest

from knowledge_service.upstream.multipart import FilePart, MultipartBody
from local_engine.double import Double, start_double

TOKEN = "stream-secret-token"
MB = 1024 * 1024
UPLOADS = "/api/projects/falcon/uploads"


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[Double]:
    engine = start_double(token=TOKEN, data_dir=tmp_path / "data")
    engine.set_job_pace("poll")  # the jobs wait: their upload folders stay as they landed
    try:
        yield engine
    finally:
        engine.stop()


def uploads_of(sim: Double) -> Path:
    assert sim.data_dir is not None
    return sim.data_dir / "uploads"


def staged(sim: Double) -> list[Path]:
    """Whatever is in the staging folder (an upload on its way in): empty when none is."""
    folder = uploads_of(sim) / ".staging"
    return sorted(folder.rglob("*")) if folder.exists() else []


def job_folders(sim: Double) -> list[str]:
    root = uploads_of(sim)
    return sorted(p.name for p in root.iterdir() if p.name.startswith("job_")) if root.exists() else []


def repeated(block: bytes, size: int) -> Iterator[bytes]:
    """``size`` bytes of ``block`` over and over, a block at a time (nothing the size of the whole)."""
    while size > 0:
        yield block[:size]
        size -= len(block)


def body_of(files: list[tuple[str, int, bytes]], boundary: str = "") -> MultipartBody:
    """The product's own streamed multipart writer: each file ``size`` bytes of ``block``."""
    parts = [FilePart(name, size, lambda b=block, s=size: repeated(b, s)) for name, size, block in files]
    return MultipartBody([("force", "false")], parts, boundary=boundary)


def post(sim: Double, content: Iterable[bytes], headers: dict[str, str], key: str = "up-1") -> httpx.Response:
    with httpx.Client(base_url=sim.url, timeout=60, verify=False) as client:
        return client.post(
            UPLOADS,
            content=content,
            headers={"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": key, **headers},
        )


def post_body(sim: Double, body: MultipartBody, key: str = "up-1", chunked: bool = False) -> httpx.Response:
    headers = {"Content-Type": body.content_type}
    if not chunked:  # without a length, httpx sends the body chunked
        headers["Content-Length"] = str(len(body))
    return post(sim, iter(body), headers, key)


def block(seed: bytes, boundary: str) -> bytes:
    """A MiB of bytes that are not text, holding the start of the body's delimiter more than once."""
    near = b"\r\n--" + boundary.encode()[:-1]
    return (near + hashlib.sha256(seed).digest() * 4096 + b"\r\n--\r\n")[:MB]


def test_a_large_upload_lands_byte_for_byte_and_nothing_stays_staged(sim: Double) -> None:
    boundary = "b-large"
    files = [(f"big/{n}.bin", 10 * MB + n, block(bytes([n]), boundary)) for n in range(3)]
    answer = post_body(sim, body_of(files, boundary))
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["job_id"]
    (held,) = [j for j in sim.jobs("falcon") if j["job_id"] == job_id]
    assert held["inputs"] == [name for name, _, _ in files]
    for number, (_, size, data) in enumerate(files):
        landed = uploads_of(sim) / job_id / str(number)
        expected = hashlib.sha256(b"".join(repeated(data, size))).hexdigest()
        assert landed.stat().st_size == size
        assert hashlib.sha256(landed.read_bytes()).hexdigest() == expected
    assert staged(sim) == []


def test_a_chunked_upload_is_read_as_it_arrives(sim: Double) -> None:
    files = [("a.md", 3 * MB + 7, b"# A\n\nChunked bytes arrive whole.\n" * 1000), ("b.md", 5, b"hello")]
    answer = post_body(sim, body_of(files), chunked=True)
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["job_id"]
    assert sim.requests[-1]["headers"].get("Transfer-Encoding") == "chunked"
    landed = uploads_of(sim) / job_id
    assert (landed / "0").read_bytes() == b"".join(repeated(files[0][2], files[0][1]))
    assert (landed / "1").read_bytes() == b"hello"
    assert staged(sim) == []


def test_the_same_key_again_replays_the_job_and_drops_the_second_copy(sim: Double) -> None:
    body = body_of([("a.md", 2 * MB, b"x" * 1000)])
    first, again = post_body(sim, body, key="same"), post_body(sim, body, key="same")
    assert (first.status_code, again.status_code) == (202, 200)  # a replay answers 200
    assert first.json()["job_id"] == again.json()["job_id"]
    assert job_folders(sim) == [first.json()["job_id"]] and staged(sim) == []


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        (b"%zz.md", "A filename has a '%' that starts no percent-encoded byte."),
        (b"%FF.md", "A filename is not percent-encoded UTF-8."),
    ],
)
def test_an_upload_with_a_refused_name_leaves_nothing_staged(sim: Double, wire: bytes, message: str) -> None:
    """The name refused is the second part's: the first was on disk by then."""
    body = body_of([("a.md", 2 * MB, b"a" * 1000), ("bad", 10, b"b")])
    content = b"".join(body).replace(b'filename="bad"', b'filename="' + wire + b'"')
    answer = post(sim, [content], {"Content-Type": body.content_type, "Content-Length": str(len(content))})
    assert (answer.status_code, answer.json()["error"]["message"]) == (400, message)
    assert staged(sim) == [] and job_folders(sim) == []


@pytest.mark.parametrize(
    "files",
    [
        [("a.md", 60 * MB, b"a" * MB), ("b.md", 40 * MB + 1, b"b" * MB)],  # the form whole, its bytes too many
        [(f"{n}.md", 1, b"x") for n in range(401)],
    ],
    ids=["bytes", "files"],
)
def test_an_upload_over_its_caps_is_413_and_leaves_nothing_staged(
    sim: Double, files: list[tuple[str, int, bytes]]
) -> None:
    answer = post_body(sim, body_of(files))
    assert answer.status_code == 413, answer.text
    assert answer.json()["error"]["message"] == "One upload is at most 100 MB and 400 files."
    assert staged(sim) == [] and job_folders(sim) == []


def test_an_upload_to_no_project_is_404_and_leaves_nothing_staged(sim: Double) -> None:
    body = body_of([("a.md", MB, b"a" * 4096)])
    with httpx.Client(base_url=sim.url, timeout=60, verify=False) as client:
        answer = client.post(
            "/api/projects/nowhere/uploads",
            content=iter(body),
            headers={
                "Authorization": f"Bearer {TOKEN}",
                "Idempotency-Key": "k",
                "Content-Type": body.content_type,
                "Content-Length": str(len(body)),
            },
        )
    assert answer.status_code == 404 and staged(sim) == [] and job_folders(sim) == []


def test_a_chunked_body_over_the_cap_is_413_at_the_chunk_that_crosses_it(sim: Double) -> None:
    body = body_of([("a.md", 101 * MB + 1, b"a" * MB)])
    answer = post_body(sim, body, chunked=True)
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "payload_too_large"
    assert staged(sim) == [] and job_folders(sim) == []


# ---------------------------------------------------------------------- on the wire
def connect(sim: Double) -> socket.socket:
    return socket.create_connection((sim.host, sim.port), timeout=30)


def head(length: int | None, boundary: str = "b0", auth: bool = True) -> bytes:
    lines = [
        f"POST {UPLOADS} HTTP/1.1",
        "Host: engine",
        f"Content-Type: multipart/form-data; boundary={boundary}",
        "Idempotency-Key: wire-1",
    ]
    lines += [f"Authorization: Bearer {TOKEN}"] if auth else []
    lines += [f"Content-Length: {length}"] if length is not None else ["Transfer-Encoding: chunked"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer_on(sock: socket.socket) -> tuple[int, bytes]:
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response.status, response.read()


def file_part(name: str) -> bytes:
    return f'--b0\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n\r\n'.encode()


def settled(sim: Double) -> bool:
    """Whether the staging folder empties (the engine notices the dropped connection)."""
    deadline = time.monotonic() + 10
    while staged(sim) and time.monotonic() < deadline:
        time.sleep(0.05)
    return staged(sim) == []


@pytest.mark.parametrize("chunked", [False, True])
def test_a_connection_dropped_mid_body_leaves_nothing_and_the_engine_serves_on(sim: Double, chunked: bool) -> None:
    with connect(sim) as sock:
        sock.sendall(head(None if chunked else 20 * MB))
        start = file_part("a.md") + b"a" * (5 * MB)
        sock.sendall(f"{20 * MB:x}\r\n".encode() + start if chunked else start)
        deadline = time.monotonic() + 10  # until the engine has begun writing the part
        while not staged(sim) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert staged(sim), "the part should be on its way to disk"
    assert settled(sim) and job_folders(sim) == []
    files = [("after.md", 2 * MB, b"after" * 1000)]
    again = post_body(sim, body_of(files), key="after")
    assert again.status_code == 202 and staged(sim) == []


def test_a_refusal_before_the_body_is_read_still_drains_it_and_keeps_the_connection(sim: Double) -> None:
    body = file_part("a.md") + b"a" * (3 * MB) + b"\r\n--b0--\r\n"
    with connect(sim) as sock:
        sock.sendall(head(len(body), auth=False) + body)
        assert answer_on(sock)[0] == 401
        sock.sendall(
            b"GET /api/status HTTP/1.1\r\nHost: engine\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n\r\n"
        )
        assert answer_on(sock)[0] == 200  # the same connection: the upload's body was read past
    assert staged(sim) == []


def test_a_declared_length_over_the_cap_is_413_before_a_byte_is_read(sim: Double) -> None:
    with connect(sim) as sock:
        sock.sendall(head(101 * MB + 1))  # and no body at all
        status, text = answer_on(sock)
    assert status == 413 and b"payload_too_large" in text and staged(sim) == []


def test_a_fault_answers_an_upload_and_nothing_is_staged(sim: Double) -> None:
    sim.set_fault("5xx", path_prefix=UPLOADS, times=1)
    body = body_of([("a.md", 2 * MB, b"a" * 1000)])
    faulted, after = post_body(sim, body, key="f-1"), post_body(sim, body, key="f-2")
    assert faulted.status_code >= 500 and after.status_code == 202
    assert staged(sim) == [] and job_folders(sim) == [after.json()["job_id"]]


def test_a_staging_folder_a_crash_left_is_cleared_at_the_next_start(tmp_path: Path) -> None:
    left = tmp_path / "data" / "uploads" / ".staging" / "0123456789abcdef"
    left.mkdir(parents=True)
    (left / "0").write_bytes(b"half an upload")
    with start_double(token=TOKEN, data_dir=tmp_path / "data"):
        assert not left.exists()


def test_an_upload_holds_a_few_pieces_in_memory_never_its_body(sim: Double) -> None:
    """Python's allocations while 30 MB arrive (the client's and the engine's, one process): the
    pieces in flight, a few MiB, where reading the body whole held it twice over."""
    files = [(f"{n}.bin", 10 * MB, block(bytes([n]), "b-mem")) for n in range(3)]
    body = body_of(files, "b-mem")
    tracemalloc.start()
    try:
        answer = post_body(sim, body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer.status_code == 202, answer.text
    assert peak < 8 * MB, f"{peak / MB:.1f} MiB at the peak"
