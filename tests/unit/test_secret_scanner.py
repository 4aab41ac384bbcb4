"""The scanner that holds the whole suite to "secrets never leak" finds what it must."""

from __future__ import annotations

from pathlib import Path

from knowledge_service.identity.principal import mint_token
from tests import secrets


def test_a_bearer_token_anywhere_in_a_text_is_a_leak() -> None:
    token = mint_token()
    found = secrets.leaks(f'{{"message": "refused {token}"}}')
    assert found == [f"bearer token {token[:6]}…"]
    assert token not in "".join(found)


def test_a_registered_forager_credential_is_a_leak() -> None:
    secrets.register("fgr_registered_for_this_test")
    assert secrets.leaks("Authorization: Bearer fgr_registered_for_this_test")


def test_the_stack_log_is_scanned_but_not_its_banner(tmp_path: Path) -> None:
    token = mint_token()
    log = tmp_path / "stack.log"
    log.write_text(
        f"  admin token    {token}   (principal local-admin)\n"
        "2026-11-30 06:14:11,417 INFO    devstack.api: GET /knowledge/status 200 3.1ms\n"
    )
    assert secrets.scan_stack_log(log) == []
    log.write_text(log.read_text() + f'{{"level":"INFO","message":"token {token}"}}\n')
    assert secrets.scan_stack_log(log) == [f"bearer token {token[:6]}…"]
