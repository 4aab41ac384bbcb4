"""Which FORAGER endpoints the colony may point at.

Loopback only, unless the deployment allows remote hosts (``knowledge_forager_allow_remote``,
file-only); then loopback or a host on the deployment's allow-list. Link-local and cloud
metadata addresses are refused always, whatever the allow-list says. No DNS lookup is made:
the rule is about the name the operator wrote.

A loopback endpoint is taken exactly as ``LOOPBACK_ENDPOINT_PATTERN`` declares it (the
pattern ``POST /settings`` documents): ``http``/``https`` in lower case, ``localhost``,
``localhost.localdomain``, ``ip6-localhost``, ``127.x.y.z`` or ``[::1]``, a port from 1 to
65535, a path without ``.``/``..`` segments, ``%`` or ``\\``, and nothing around it. Any other
spelling of a loopback host (``[::ffff:127.0.0.1]``, ``[0000::1]``, a zone ``[::1%25eth0]``,
``LOCALHOST``) is refused, not read generously: the document and the code take the same URLs.
Every endpoint, remote ones included, is held to the same syntax (scheme, port, path, spaces).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9][0-9]|6[0-4][0-9][0-9][0-9]|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
_PATH = r"(/(?!\.\.?(/|$))[^/?#\s%\\]*)*"
LOOPBACK_ENDPOINT_PATTERN = (
    r"^(https?://(localhost|localhost\.localdomain|ip6-localhost|\[::1\]|127\."
    + _OCTET
    + r"\."
    + _OCTET
    + r"\."
    + _OCTET
    + r")(:"
    + _PORT
    + r")?"
    + _PATH
    + r")?$"
)
"""What the policy takes with remote hosts off, as the document declares it: a loopback
http(s) URL with no credentials, query or fragment, or ``""``."""
LOOPBACK_ENDPOINT = re.compile(LOOPBACK_ENDPOINT_PATTERN)
_SCHEME = re.compile(r"^https?://")

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
    if LOOPBACK_ENDPOINT.fullmatch(url) and url:
        return url.rstrip("/")
    if not _SCHEME.match(url):
        raise EndpointRefused("must be an http:// or https:// URL (the scheme in lower case).")
    if any(c.isspace() or not c.isprintable() for c in url):
        raise EndpointRefused("must not contain spaces or control characters (none around it either).")
    parts = urlsplit(url)
    host = _host_of(parts)
    address = _address(host)
    if host in METADATA_HOSTS or (address is not None and (address in METADATA_ADDRESSES or address.is_link_local)):
        raise EndpointRefused(f"names {host}, a link-local or metadata address, which is refused always.")
    if address is not None and address.is_unspecified:
        raise EndpointRefused(f"names {host}, which is no host at all.")
    loopback = host in LOOPBACK_NAMES or (address is not None and address.is_loopback)
    if loopback:
        raise EndpointRefused(
            f"spells the loopback host as {parts.netloc!r}, which the setting's pattern does not take; "
            "write localhost, 127.0.0.1 or [::1]."
        )
    if not allow_remote:
        raise EndpointRefused(
            f"names {host}, which is not loopback, and knowledge_forager_allow_remote is false "
            "(a deployment parameter no API call can change)."
        )
    if host not in allowed_hosts:
        raise EndpointRefused(f"names {host}, which is not on this deployment's allowed hosts.")
    return url.rstrip("/")


def _host_of(parts: SplitResult) -> str:
    """The URL's host (lower case), once its syntax is held: no credentials, query or
    fragment, a port from 1 to 65535, a plain path."""
    if parts.username or parts.password:
        raise EndpointRefused("must not carry credentials; the credential is its own setting.")
    if parts.query or parts.fragment:
        raise EndpointRefused("must not carry a query or a fragment.")
    try:
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError as error:
        raise EndpointRefused("has a port that is not a number from 1 to 65535.") from error
    if not host:
        raise EndpointRefused("names no host.")
    if port == 0:
        raise EndpointRefused("has port 0, which no server listens on; name a port from 1 to 65535.")
    if "%" in parts.path or "\\" in parts.path or any(s in (".", "..") for s in parts.path.split("/")):
        raise EndpointRefused("has a path with '.' or '..' segments, '%' or '\\'; write the path plainly.")
    return host


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
