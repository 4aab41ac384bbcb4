"""The endpoint setting: loopback only, unless the deployment allows listed remote hosts."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledge_service.domain.endpoint_policy import EndpointRefused, check_endpoint


def allowed(url: str, *, remote: bool = False, hosts: tuple[str, ...] = ()) -> str:
    return check_endpoint(url, allow_remote=remote, allowed_hosts=hosts)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8790", "http://localhost:8790/", "http://[::1]:8790", "https://127.8.9.10"]
)
def test_loopback_is_allowed_by_default(url: str) -> None:
    assert allowed(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["http://forager.internal:8790", "http://10.0.0.5:8790", "http://8.8.8.8"])
def test_remote_hosts_are_refused_while_allow_remote_is_false(url: str) -> None:
    with pytest.raises(EndpointRefused, match="not loopback"):
        allowed(url, hosts=("forager.internal",))


def test_a_remote_host_needs_both_allow_remote_and_the_allow_list() -> None:
    assert allowed("http://forager.internal:8790", remote=True, hosts=("forager.internal",))
    with pytest.raises(EndpointRefused, match="allowed hosts"):
        allowed("http://other.internal:8790", remote=True, hosts=("forager.internal",))


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest",
        "http://metadata.google.internal",
        "http://[fd00:ec2::254]",
        "http://169.254.1.1",
        "http://[fe80::1]",
        "http://[::ffff:169.254.169.254]",
    ],
)
def test_link_local_and_metadata_are_refused_even_when_listed(url: str) -> None:
    host = url.split("//")[1].split("/", maxsplit=1)[0].strip("[]")
    with pytest.raises(EndpointRefused, match="refused always"):
        allowed(url, remote=True, hosts=(host,))


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://127.0.0.1", "http"),
        ("http://user:pw@127.0.0.1", "credentials"),
        ("http://127.0.0.1/?x=1", "query"),
        ("http://", "no host"),
        ("http://0.0.0.0:8790", "no host at all"),
    ],
)
def test_malformed_endpoints_are_refused_with_a_reason(url: str, why: str) -> None:
    with pytest.raises(EndpointRefused, match=why):
        allowed(url)


@given(st.ip_addresses())
def test_no_link_local_address_is_ever_allowed(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    host = f"[{address}]" if address.version == 6 else str(address)
    url = f"http://{host}:8790"
    try:
        result = allowed(url, remote=True, hosts=(str(address),))
    except EndpointRefused:
        return
    assert not address.is_link_local
    assert result == url
