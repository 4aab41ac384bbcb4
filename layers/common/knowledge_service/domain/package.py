"""The ANTHILL package version: the one place this host's number is written.

``HOST_PACKAGE_VERSION`` is the exact ``forager.export.anthill`` package version this host
reads. It is an exact version, not a floor: an older package is as unreadable as a newer
one. The sentences are composed here once, so no reader can word them two ways.
"""

from __future__ import annotations

from enum import StrEnum

HOST_PACKAGE_VERSION = 7


class PackageAgreement(StrEnum):
    AGREED = "agreed"
    DISAGREED = "disagreed"
    UNSTATED = "unstated"
    UNKNOWN = "unknown"


def package_agreement(engine_version: int | None, *, asked: bool) -> tuple[PackageAgreement, str | None]:
    """Compare what the engine declares with what this host reads.

    ``asked`` is False when the engine could not be asked (knowledge off, unreachable).
    """
    if not asked:
        return PackageAgreement.UNKNOWN, None
    if engine_version is None:
        return PackageAgreement.UNSTATED, (
            f"This knowledge service states no ANTHILL package version; this host reads version "
            f"{HOST_PACKAGE_VERSION}. Whether a package from this engine can be consumed here is unstated, "
            "not disagreed. Search, retrieval, review, the change feed and per-source study are unaffected."
        )
    if engine_version == HOST_PACKAGE_VERSION:
        return PackageAgreement.AGREED, None
    return PackageAgreement.DISAGREED, (
        f"This host reads ANTHILL package version {HOST_PACKAGE_VERSION} and this knowledge service emits version "
        f"{engine_version}, so the ANTHILL package from this engine is not one this host can consume. Search, "
        "retrieval, review, the change feed and per-source study are unaffected."
    )
