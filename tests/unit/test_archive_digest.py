"""The streaming hash an archive passes before it is handed over: known vectors, and bodies
that are corrupted, truncated or longer than recorded."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings, strategies as st

from knowledge_service.domain.archive_digest import ArchiveDigest
from knowledge_service.errors import UpstreamMismatch

VECTORS = [
    (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
        b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ),
    (b"a" * 1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
]


def stream(check: ArchiveDigest, data: bytes, piece: int = 4096) -> str:
    for start in range(0, len(data), piece):
        check.update(data[start : start + piece])
    return check.verify()


@pytest.mark.parametrize(("data", "digest"), VECTORS, ids=["empty", "abc", "448-bit", "million-a"])
def test_known_vectors_verify_in_any_chunking(data: bytes, digest: str) -> None:
    for piece in (1, 7, 64, 65536):
        if piece == 1 and len(data) > 1000:
            continue
        assert stream(ArchiveDigest(digest, len(data), digest), data, piece) == digest


def test_a_corrupted_byte_is_a_mismatch() -> None:
    data, digest = VECTORS[3]
    corrupted = data[:500_000] + b"b" + data[500_001:]
    with pytest.raises(UpstreamMismatch, match="recorded"):
        stream(ArchiveDigest(digest, len(data), digest), corrupted)


def test_a_truncated_body_is_a_size_mismatch() -> None:
    data, digest = VECTORS[3]
    with pytest.raises(UpstreamMismatch, match="bytes"):
        stream(ArchiveDigest(digest, len(data), digest), data[:-1])


def test_an_over_long_body_is_refused_at_the_first_extra_byte() -> None:
    data, digest = VECTORS[1]
    check = ArchiveDigest(digest, len(data), digest)
    check.update(data)
    with pytest.raises(UpstreamMismatch, match="more than"):
        check.update(b"x")


def test_the_digest_beside_the_bytes_must_be_the_recorded_one() -> None:
    data, digest = VECTORS[1]
    other = VECTORS[0][1]
    with pytest.raises(UpstreamMismatch, match="beside"):
        stream(ArchiveDigest(digest, len(data), other), data)


def test_a_wrong_digest_beside_the_bytes_is_refused_before_a_byte_is_read_and_none_is_left_to_the_end() -> None:
    data, digest = VECTORS[1]
    with pytest.raises(UpstreamMismatch, match="beside"):
        ArchiveDigest(digest, len(data), VECTORS[0][1]).announced()
    ArchiveDigest(digest, len(data), digest).announced()
    silent = ArchiveDigest(digest, len(data), "")
    silent.announced()  # nothing sent beside the bytes: the body is read, and the end refuses it
    with pytest.raises(UpstreamMismatch, match="beside"):
        stream(silent, data)


def test_a_recorded_digest_that_is_not_a_sha256_is_refused_before_anything() -> None:
    with pytest.raises(UpstreamMismatch):
        ArchiveDigest("not-a-digest", 3, "not-a-digest")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=4096), st.integers(min_value=1, max_value=512), st.data())
def test_only_the_exact_bytes_verify(data: bytes, piece: int, draw: st.DataObject) -> None:
    digest = hashlib.sha256(data).hexdigest()
    assert stream(ArchiveDigest(digest, len(data), digest), data, piece) == digest
    mutated = draw.draw(st.binary(max_size=4096).filter(lambda other: other != data))
    with pytest.raises(UpstreamMismatch):
        stream(ArchiveDigest(digest, len(data), digest), mutated, piece)
