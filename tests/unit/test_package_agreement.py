"""package_agreement and its two sentences, composed once."""

from __future__ import annotations

from knowledge_service.domain.package import HOST_PACKAGE_VERSION, PackageAgreement, package_agreement


def test_same_version_agrees_with_no_note() -> None:
    assert package_agreement(HOST_PACKAGE_VERSION, asked=True) == (PackageAgreement.AGREED, None)


def test_a_mismatch_states_both_numbers_in_the_documented_sentence() -> None:
    agreement, note = package_agreement(6, asked=True)
    assert agreement is PackageAgreement.DISAGREED
    assert note == (
        "This host reads ANTHILL package version 7 and this knowledge service emits version 6, so the ANTHILL "
        "package from this engine is not one this host can consume. Search, retrieval, review, the change feed and "
        "per-source study are unaffected."
    )


def test_a_newer_engine_disagrees_too_because_the_pin_is_exact() -> None:
    assert package_agreement(8, asked=True)[0] is PackageAgreement.DISAGREED


def test_an_engine_that_states_nothing_is_unstated_not_disagreed() -> None:
    agreement, note = package_agreement(None, asked=True)
    assert agreement is PackageAgreement.UNSTATED
    assert note == (
        "This knowledge service states no ANTHILL package version; this host reads version 7. Whether a package "
        "from this engine can be consumed here is unstated, not disagreed. Search, retrieval, review, the change "
        "feed and per-source study are unaffected."
    )


def test_an_engine_that_could_not_be_asked_is_unknown() -> None:
    assert package_agreement(None, asked=False) == (PackageAgreement.UNKNOWN, None)
