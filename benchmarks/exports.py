"""One archive (1 GiB by default) from the simulator through the export path.

The path is the product's own: ``ForagerClient.download_archive`` streaming from the FORAGER
simulator on loopback, ``ArchiveDigest`` hashing every byte, and a multipart upload to S3 that
is completed only once the digest and size hold (``domain.exports.receive``). S3 is moto's
server in a process of its own, so what the S3 emulator holds is not counted against the path.

It runs in a fresh interpreter and reports that process's peak resident memory (the whole
process: Python, boto3, the simulator's threads and the path) and its growth during the
download, and the throughput as a ratio of plain ``hashlib.sha256`` over the same bytes, read
from the same file. The archive is a real one (a JSONL export of the demo base) carrying the
control port's stored padding of that many bytes, built to the engine's disk before the clock
starts. ``BENCH_ARCHIVE_BYTES`` sets another size.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

GIB = 1024**3
MEMORY_LIMIT_MIB = 128


def measure() -> dict[str, Any]:
    size = int(os.environ.get("BENCH_ARCHIVE_BYTES", str(GIB)))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.exports", "--child", str(size)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the export benchmark failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


@contextmanager
def _moto_server() -> Iterator[str]:
    """moto's S3 and DynamoDB in a process of their own, on a free loopback port."""
    import httpx

    port = _free_port()
    moto = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                httpx.get(endpoint, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        yield endpoint
    finally:
        moto.terminate()
        moto.wait(timeout=30)


def _emulated_aws(endpoint: str) -> tuple[Any, Any]:
    import boto3

    session = boto3.session.Session(
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - the emulator's placeholder credentials
        region_name="us-east-1",
    )
    s3 = session.client("s3", endpoint_url=endpoint)
    dynamodb = session.resource("dynamodb", endpoint_url=endpoint)
    s3.create_bucket(Bucket="archives")
    dynamodb.create_table(
        TableName="config",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return s3, dynamodb


def _timed(call: Any, spent: list[float]) -> Any:
    def timed(**kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(**kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    return timed


def _child(size: int) -> dict[str, Any]:
    from knowledge_service.domain import exports as domain
    from knowledge_service.storage.archives import ArchiveStore, archive_key
    from knowledge_service.upstream.client import ForagerClient
    from local_engine.double import start_double
    from local_engine.exports import jobs as sim_exports

    with _moto_server() as endpoint:
        s3, dynamodb = _emulated_aws(endpoint)
        s3_seconds = [0.0]
        for operation in ("create_multipart_upload", "upload_part", "complete_multipart_upload"):
            setattr(s3, operation, _timed(getattr(s3, operation), s3_seconds))
        archives = ArchiveStore(s3, "archives", dynamodb, "config")
        with start_double() as sim:
            book = sim_exports.book(sim.state)
            book.build_seconds = 0.0
            book.padding_bytes = size
            export = book.wait(book.start("falcon", "jsonl", {}).export_id, timeout=1800)
            row = export.to_json()  # FORAGER records the digest as it builds: not the path's time
            sha256, size = str(row["sha256"]), int(row["size_bytes"])
            assert export.path is not None

            started = time.perf_counter()
            plain = hashlib.sha256()
            with export.path.open("rb") as archive:
                while piece := archive.read(64 * 1024):
                    plain.update(piece)
            plain_seconds = time.perf_counter() - started
            assert plain.hexdigest() == sha256

            client = ForagerClient(sim.url, sim.token, timeout_seconds=25)
            key = archive_key(export.export_id, sha256)
            before_mib = _peak_mib()
            started = time.perf_counter()
            digest = domain.receive(client, archives, export.export_id, key, sha256, size, domain.PART_BYTES)
            path_seconds = time.perf_counter() - started
            peak_mib = _peak_mib()
            stored = archives.size_of(key)
        assert digest == sha256 and stored == size, (digest, stored)
        mib = size / 1024**2
        return {
            "archive_bytes": size,
            "part_bytes": domain.PART_BYTES,
            "path_seconds": round(path_seconds, 2),
            "path_mib_per_second": round(mib / path_seconds, 1),
            "plain_sha256_seconds": round(plain_seconds, 2),
            "plain_sha256_mib_per_second": round(mib / plain_seconds, 1),
            "throughput_ratio_to_plain_sha256": round(plain_seconds / path_seconds, 3),
            "s3_emulator_seconds": round(s3_seconds[0], 2),
            "ratio_without_s3_time": round(plain_seconds / max(path_seconds - s3_seconds[0], 1e-9), 3),
            "peak_rss_mib": round(peak_mib, 1),
            "rss_growth_during_download_mib": round(peak_mib - before_mib, 1),
            "memory_limit_mib": MEMORY_LIMIT_MIB,
            "under_limit": peak_mib < MEMORY_LIMIT_MIB,
        }


def report(row: dict[str, Any]) -> None:
    print("\nExport archive through the path (simulator -> SHA-256 -> S3 multipart on moto's server)")
    print(
        f"{row['archive_bytes'] / 1024**2:.0f} MiB in {row['path_seconds']} s ({row['path_mib_per_second']} MiB/s); "
        f"plain hashlib.sha256 over the same bytes {row['plain_sha256_seconds']} s "
        f"({row['plain_sha256_mib_per_second']} MiB/s); ratio {row['throughput_ratio_to_plain_sha256']}"
    )
    print(
        f"of which S3 (moto's server: create, upload_part, complete) {row['s3_emulator_seconds']} s; "
        f"ratio without it {row['ratio_without_s3_time']}"
    )
    print(
        f"peak RSS {row['peak_rss_mib']} MiB (grew {row['rss_growth_during_download_mib']} MiB during the download; "
        f"limit {row['memory_limit_mib']} MiB: {'under' if row['under_limit'] else 'OVER'})"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(_child(int(sys.argv[2]))))
    else:
        report(measure())
