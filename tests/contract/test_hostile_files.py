"""A file can fail; its job cannot (issue 56). Over loopback against an engine with a worker
process, as ``make run`` has: a truncated DOCX, an entity-expansion DOCX, a DOCX zip bomb and a
flate-bomb PDF each fail as their source, with a sentence, while another base's job completes
beside them and search still answers."""

from __future__ import annotations

import io
import os
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local_engine.double import Double, start_double
from tests import secrets

pytestmark = pytest.mark.contract

TOKEN = "engine-hostile-token"
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
    'wordprocessingml.document.main+xml"/></Types>'
)
RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
    'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)


def _docx(document: bytes | Iterator[bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", RELS)
        with archive.open("word/document.xml", "w") as part:
            for piece in [document] if isinstance(document, bytes) else document:
                part.write(piece)
    return out.getvalue()


def _bomb_xml(megabytes: int) -> Iterator[bytes]:
    yield f"<w:document {W}><w:body><w:p><w:r><w:t>".encode()
    block = b" " * (1024 * 1024)
    for _ in range(megabytes):
        yield block
    yield b"</w:t></w:r></w:p></w:body></w:document>"


def _laughs() -> bytes:
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10)
    ]
    return (
        f'<?xml version="1.0"?><!DOCTYPE lolz [{"".join(entities)}]>'
        f"<w:document {W}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    ).encode()


def _flate_bomb_pdf() -> bytes:
    stream = zlib.compress(b"0" * 80_000_000, 9)  # past pypdf's 75 MB limit on one stream's output
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Double]:
    with start_double(token=TOKEN, data_dir=tmp_path_factory.mktemp("data"), workers=1) as sim:
        secrets.register(sim.token)
        yield sim


def _post(api: httpx.Client, path: str, body: dict[str, Any]) -> Any:
    answer = api.post(path, json=body, headers={"Idempotency-Key": os.urandom(8).hex()})
    assert answer.status_code in (200, 201, 202), answer.text
    return answer.json()


def _finished(api: httpx.Client, ref: str, job_id: str) -> dict[str, Any]:
    for _ in range(3000):
        job: dict[str, Any] = api.get(f"/api/projects/{ref}/jobs/{job_id}").json()
        if job["terminal"]:
            return job
        time.sleep(0.02)
    raise AssertionError(f"the job did not finish: {job}")


def test_hostile_files_fail_as_sources_while_another_bases_job_completes(engine: Double, tmp_path: Path) -> None:
    # Given four hostile files beside a good one, and another organization's folder of its own
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "truncated.docx").write_bytes(_docx(f"<w:document {W}><w:body><w:p><w:r><w:t>Hel".encode()))
    (hostile / "laughs.docx").write_bytes(_docx(_laughs()))
    (hostile / "bomb.docx").write_bytes(_docx(_bomb_xml(210)))
    (hostile / "bomb.pdf").write_bytes(_flate_bomb_pdf())
    (hostile / "good.md").write_text("# Good\n\nThe good file says the tide turns at noon.\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "ferry.md").write_text("# Ferry\n\nThe ferry to the island leaves pier four at seven.\n")
    assert all(
        (hostile / n).stat().st_size < 700_000 for n in ("truncated.docx", "laughs.docx", "bomb.docx", "bomb.pdf")
    )
    api = httpx.Client(base_url=engine.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60.0)
    mine = str(_post(api, "/api/projects", {"name": "Hostile"})["project_ref"])
    theirs = str(_post(api, "/api/projects", {"name": "Another organization"})["project_ref"])
    # When both are imported at once
    job = _post(api, f"/api/projects/{mine}/jobs", {"paths": [str(hostile)]})
    beside = _post(api, f"/api/projects/{theirs}/jobs", {"paths": [str(other)]})
    # Then the other job completes and answers, and the hostile job completes with four failed sources
    assert _finished(api, theirs, beside["job_id"])["status"] == "completed"
    hits = api.get(f"/api/projects/{theirs}/search", params={"q": "ferry island"}).json()["hits"]
    assert hits and "pier four" in hits[0]["statement"]
    done = _finished(api, mine, job["job_id"])
    assert done["status"] == "completed", done
    stages = {s["name"]: s for s in done["stages"]}
    assert stages["parsing_extraction"]["failed"] == 4, stages["parsing_extraction"]
    sources = {s["name"]: s for s in api.get(f"/api/projects/{mine}/sources").json()["sources"]}
    for name in ("truncated.docx", "laughs.docx", "bomb.docx", "bomb.pdf"):
        assert sources[f"hostile/{name}"]["processing_status"] == "failed", name
        page = api.get(f"/api/sources/{sources[f'hostile/{name}']['source_id']}").json()
        assert page["error"]["stage"] == "parsing_extraction" and page["error"]["message"], page["error"]
    assert sources["hostile/good.md"]["processing_status"] == "completed"
    assert api.get(f"/api/projects/{mine}/search", params={"q": "tide noon"}).json()["hits"]
    assert api.get("/api/status").status_code == 200
