"""An idle local stack: the CPU seconds its process uses over a stretch with no request.

``python -m devstack`` in its own process (``benchmarks.load.local_stack``), ~2,000 DynamoDB
items and 100 S3 objects written through the emulator first (as a function writes them: each
one journaled), then nothing is sent for ``seconds``: the process's user + system CPU time
over that stretch (``/proc/<pid>/stat``), its resident memory before and after, and the load
average of the machine (a loaded machine slows a process down, it does not make an idle one
busy). The bus's delivery thread long-polls its SQS queues all along, as it does in every
stack. Before the journal, the snapshot loop took this stack to 70-93 % of a core.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import boto3

from benchmarks.load import Running, local_stack

ITEMS = 2000
OBJECTS = 100
SECONDS = 10.0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _seed(stack: Running) -> None:
    assert stack.state_dir is not None
    lines = (stack.state_dir / "env").read_text().splitlines()
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    options: dict[str, Any] = {
        "endpoint_url": env["AWS_ENDPOINT_URL"],
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
    with boto3.resource("dynamodb", **options).Table(env["PAGES_TABLE"]).batch_writer() as batch:
        for n in range(ITEMS):
            batch.put_item(Item={"pk": "PAGE#idle", "sk": f"/fs/p{n:05d}.md", "meta": "x" * 500})
    s3 = boto3.client("s3", **options)
    for n in range(OBJECTS):
        s3.put_object(Bucket=env["ARCHIVE_BUCKET"], Key=f"pages/idle/{n:05d}", Body=b"x" * 2000)


def measure(seconds: float = SECONDS) -> dict[str, Any]:
    with local_stack() as stack:
        _seed(stack)
        time.sleep(1.0)  # the seed's last answers settle
        rss_before = _rss_mib(stack.pid)
        cpu = _cpu_seconds(stack.pid)
        started = time.monotonic()
        time.sleep(seconds)
        used = _cpu_seconds(stack.pid) - cpu
        elapsed = time.monotonic() - started
        return {
            "items": ITEMS,
            "objects": OBJECTS,
            "seconds": round(elapsed, 1),
            "cpu_seconds": round(used, 2),
            "cpu_percent_of_a_core": round(100 * used / elapsed, 1),
            "rss_before_mib": rss_before,
            "rss_after_mib": _rss_mib(stack.pid),
            "load_average": [round(v, 1) for v in os.getloadavg()],
        }


def report(row: dict[str, Any]) -> None:
    print(
        f"\nAn idle local stack (python -m devstack; {row['items']:,} items and {row['objects']} objects, no request)"
    )
    print(f"{'seconds':>8}{'CPU s':>7}{'% core':>8}{'RSS before':>12}{'RSS after':>11}   load average")
    print(
        f"{row['seconds']:>8}{row['cpu_seconds']:>7}{row['cpu_percent_of_a_core']:>8}{row['rss_before_mib']:>12}"
        f"{row['rss_after_mib']:>11}   {' '.join(str(v) for v in row['load_average'])}"
    )


if __name__ == "__main__":
    report(measure())
