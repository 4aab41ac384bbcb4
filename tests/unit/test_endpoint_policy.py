"""The endpoint setting: loopback only, unless the deployment allows listed remote hosts."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import assume, given, strategies as st

from knowledge_service.domain.endpoint_policy import LOOPBACK_ENDPOINT, EndpointRefused, check_endpoint


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


LOOK_ALIKES = [
    "http://localhost.evil.example",
    "http://localhost.evil.example:8790",
    "http://localhost-evil.example",
    "http://localhostevil.example",
    "http://127.0.0.1.nip.io:8790",
    "http://127.0.0.1.evil.example",
    "http://localhost.",
    "http://localhost.:8790",
    "http://127.0.0.1.",
    "http://127.1",
    "http://0x7f000001",
    "http://2130706433",
    "http://[::2]",
    "http://[::ffff:8.8.8.8]",
    "http://[64:ff9b::7f00:1]",
    "http://[2001:db8::1]:8790",
]


@pytest.mark.parametrize("url", LOOK_ALIKES)
def test_a_host_that_only_looks_like_loopback_is_refused_while_allow_remote_is_false(url: str) -> None:
    with pytest.raises(EndpointRefused, match="not loopback"):
        allowed(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1@evil.example",
        "http://localhost@evil.example:8790",
        "http://localhost:8790@evil.example",
        "http://127.0.0.1:8790@[2001:db8::1]",
        "http://evil.example\\@127.0.0.1",
        "http://evil.example@127.0.0.1",
    ],
)
def test_userinfo_never_smuggles_a_host_past_the_loopback_rule(url: str) -> None:
    with pytest.raises(EndpointRefused):
        allowed(url)


@pytest.mark.parametrize("url", ["http://evil.example#@127.0.0.1", "http://evil.example?@127.0.0.1"])
def test_a_fragment_or_query_never_smuggles_a_host_past_the_loopback_rule(url: str) -> None:
    with pytest.raises(EndpointRefused):
        allowed(url)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://LOCALHOST:8790", "spells the loopback host"),
        ("http://[0:0:0:0:0:0:0:1]:8790", "spells the loopback host"),
        ("http://[::ffff:127.0.0.1]:8790", "spells the loopback host"),
        ("http://[::ffff:127.0.0.1]", "spells the loopback host"),
        ("http://[0000::1]", "spells the loopback host"),
        ("http://[::1%25eth0]", "spells the loopback host"),
        ("HTTP://127.0.0.1:8790", "lower case"),
        ("Http://localhost", "lower case"),
        ("http://localhost:0", "port 0"),
        ("http://127.0.0.1:00", "port 0"),
        ("http://localhost:8790 ", "spaces"),
        (" http://localhost:8790", "lower case"),
        ("http://localhost:8790\t", "spaces"),
        ("http://localhost/../..", "'..' segments"),
        ("http://localhost/a/./b", "'..' segments"),
        ("http://localhost/%2e%2e/x", "'%'"),
    ],
)
def test_a_loopback_endpoint_the_documents_pattern_refuses_is_refused_with_a_reason(url: str, why: str) -> None:
    assert not LOOPBACK_ENDPOINT.fullmatch(url)
    with pytest.raises(EndpointRefused, match=re.escape(why)):
        allowed(url)
    with pytest.raises(EndpointRefused):
        allowed(url, remote=True, hosts=("forager.internal",))


PIECES = st.tuples(
    st.sampled_from(["http://", "https://", "HTTP://", "ftp://", " http://", "http:/"]),
    st.sampled_from(
        [
            *("localhost", "LocalHost", "127.0.0.1", "127.1", "[::1]", "[0000::1]", "[::ffff:127.0.0.1]"),
            *("[::1%25lo]", "ip6-localhost", "localhost.", "u@localhost", "forager.internal", "0.0.0.0"),
            "127.0.0.01",
        ]
    ),
    st.sampled_from(["", ":0", ":1", ":8790", ":65535", ":65536", ":x", ":"]),
    st.sampled_from(["", "/", "/api", "/a/../b", "/./", "/%2e", "/a b", "?q=1", "#f", "\\x", "/a\\b"]),
    st.sampled_from(["", " ", "\n", "/"]),
).map("".join)


@given(PIECES)
def test_with_allow_remote_false_the_code_takes_exactly_what_the_documents_pattern_takes(url: str) -> None:
    try:
        allowed(url)
    except EndpointRefused:
        assert not LOOPBACK_ENDPOINT.fullmatch(url), url
        return
    assert LOOPBACK_ENDPOINT.fullmatch(url), url


LABEL = st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?\Z")
LOOPBACK_PREFIX = st.sampled_from(["localhost", "127.0.0.1", "127.8.9.10", "localhost.localdomain", "ip6-localhost"])


@given(
    prefix=LOOPBACK_PREFIX, separator=st.sampled_from([".", "-", ""]), labels=st.lists(LABEL, min_size=1, max_size=3)
)
def test_no_name_that_merely_starts_with_a_loopback_name_is_loopback(
    prefix: str, separator: str, labels: list[str]
) -> None:
    host = prefix + separator + ".".join(labels)
    assume(not _really_loopback(host))  # 127.0.0.10, localhost.localdomain: loopback indeed
    with pytest.raises(EndpointRefused, match="not loopback"):
        allowed(f"http://{host}:8790")


@given(host=st.lists(LABEL, min_size=1, max_size=4).map(".".join))
def test_with_allow_remote_false_only_loopback_names_and_addresses_are_ever_allowed(host: str) -> None:
    try:
        allowed(f"http://{host}:8790", hosts=(host,))
    except EndpointRefused:
        return
    assert _really_loopback(host)


def _really_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in {"localhost", "localhost.localdomain", "ip6-localhost"}
