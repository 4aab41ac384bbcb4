"""Which FORAGER endpoints the colony may point at.

Loopback only, unless the deployment allows remote hosts (``knowledge_forager_allow_remote``,
file-only); then loopback or a host on the deployment's allow-list. Link-local and cloud
metadata addresses are refused always, whatever the allow-list says. No DNS lookup is made:
the rule is about the name the operator wrote.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

METADATA_HOSTS = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"}
)
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class EndpointRefused(ValueError):
    """The endpoint is not one this deployment may use; the message says why."""


def check_endpoint(url: str, *, allow_remote: bool, allowed_hosts: tuple[str, ...]) -> str:
    """The endpoint, normalised (no trailing slash), or ``EndpointRefused``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise EndpointRefused("must be an http:// or https:// URL.")
    if parts.username or parts.password:
        raise EndpointRefused("must not carry credentials; the credential is its own setting.")
    if parts.query or parts.fragment:
        raise EndpointRefused("must not carry a query or a fragment.")
    try:
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError as error:
        raise EndpointRefused("has a port that is not a number.") from error
    if not host:
        raise EndpointRefused("names no host.")
    address = _address(host)
    if host in METADATA_HOSTS or (address is not None and (address in METADATA_ADDRESSES or address.is_link_local)):
        raise EndpointRefused(f"names {host}, a link-local or metadata address, which is refused always.")
    if address is not None and address.is_unspecified:
        raise EndpointRefused(f"names {host}, which is no host at all.")
    loopback = host in LOOPBACK_NAMES or (address is not None and address.is_loopback)
    if not loopback:
        if not allow_remote:
            raise EndpointRefused(
                f"names {host}, which is not loopback, and knowledge_forager_allow_remote is false "
                "(a deployment parameter no API call can change)."
            )
        if host not in allowed_hosts:
            raise EndpointRefused(f"names {host}, which is not on this deployment's allowed hosts.")
    return url.strip().rstrip("/")


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
