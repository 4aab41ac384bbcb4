"""The kb client's reading of the hub's refusals: the sentence, never the raw body."""

from __future__ import annotations

import httpx
import pytest

from kb.hub import EX_NOINPUT, EX_SOFTWARE, Config, Hub, HubError


def refused_with(status: int, body: bytes, content_type: str) -> HubError:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"Content-Type": content_type})

    with (
        Hub(Config("http://hub.test", "t", "p"), transport=httpx.MockTransport(answer)) as hub,
        pytest.raises(HubError) as refused,
    ):
        hub.get("/fs/a.md")
    return refused.value


@pytest.mark.parametrize(
    ("body", "content_type", "sentence"),
    [
        (b'{"type": "about:blank", "code": "not_found", "detail": "No page."}', "application/problem+json", "No page."),
        (
            b'{"success": false, "message": "No such route.", "data": null, "code": "not_found"}',
            "application/json",
            "No such route.",
        ),
        (b'{"message": "Not Found"}', "application/json", "Not Found"),
    ],
)
def test_a_refusal_is_the_hubs_sentence_in_whichever_shape_it_came(
    body: bytes, content_type: str, sentence: str
) -> None:
    refused = refused_with(404, body, content_type)
    assert refused.code == EX_NOINPUT or refused.hub_code == "error"
    assert refused.message.endswith(f": {sentence}")
    assert "{" not in refused.message


def test_a_body_that_is_not_json_is_named_by_its_status_not_printed() -> None:
    refused = refused_with(502, b"<html><body>Bad gateway</body></html>", "text/html")
    assert refused.code == EX_SOFTWARE
    assert refused.message == "the hub refused (502 error): Bad Gateway"
