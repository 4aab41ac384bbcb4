"""A hub's archive answered by a fake: the bytes the builder writes (``domain/pages/archive.py``'s
own writer), and the 409-then-303 dance of ``GET .../kb/archive``."""

from __future__ import annotations

import hashlib
import io

import httpx

from knowledge_service.domain.pages import archive

S3_URL = "http://s3.test/kb-archives/falcon/1.tar.gz"


def archive_bytes(project: str, pages: dict[str, bytes], generation: int = 1) -> bytes:
    entries = [
        archive.Entry(path, "sha256:" + hashlib.sha256(data).hexdigest(), len(data))
        for path, data in sorted(pages.items())
    ]
    sink = io.BytesIO()
    archive.write_archive(sink, archive.manifest(project, generation, entries), ((e, pages[e.path]) for e in entries))
    return sink.getvalue()


class ArchiveAnswers:
    """``GET /archive``: ``not_ready`` answers first (Retry-After given), then the 303; the
    presigned URL's host serves ``data``. Counts both."""

    def __init__(self, data: bytes, not_ready: int = 1, retry_after: str = "3") -> None:
        self.data = data
        self.not_ready = not_ready
        self.retry_after = retry_after
        self.hub_requests = 0
        self.downloads = 0

    def answer(self, request: httpx.Request) -> httpx.Response | None:
        """The answer for the archive's two URLs; None for any other request."""
        if request.url.host == "s3.test":
            self.downloads += 1
            assert "authorization" not in request.headers  # the token never goes to S3
            return httpx.Response(200, content=self.data)
        if request.url.path.endswith("/kb/archive"):
            self.hub_requests += 1
            if self.not_ready > 0:
                self.not_ready -= 1
                return httpx.Response(
                    409,
                    json={"code": "not_ready", "detail": "being built", "status": 409},
                    headers={"Retry-After": self.retry_after},
                )
            return httpx.Response(303, headers={"Location": S3_URL}, json={"url": S3_URL})
        return None
