"""POST /knowledge/project-map, GET /knowledge/projects and POST /knowledge/bases."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge_service.domain.idempotency import scoped_key
from knowledge_service.errors import Conflict
from knowledge_service.identity.principal import Permission, ProjectRole
from knowledge_service.runtime import Runtime
from knowledge_service.storage.conditions import WriteFailed
from knowledge_service.storage.config_store import ConfigStore
from local_engine.double import Double
from tests.conftest import Api, principal


def test_bind_persists_at_once_and_echoes_the_map_the_caller_sees(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/project-map", body={"project": "colony-docs", "knowledge_base": "harbour"})
    assert answer.status == 200
    assert answer.body["data"] == {"project_map": {"colony-docs": "harbour", "falcon": "falcon"}, "default_project": ""}
    assert knowledge_on.config.scope("colony-docs").binding.knowledge_base == "harbour"


def test_a_bind_sent_as_knowledgeBase_is_refused_never_taken_as_an_unbind(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/project-map", body={"project": "falcon", "knowledgeBase": "harbour"})
    assert answer.status == 400
    assert answer.body["code"] == "bad_request"
    assert "knowledgeBase" in answer.body["message"] or "knowledge_base" in answer.body["message"]
    assert knowledge_on.config.scope("falcon").binding.knowledge_base == "falcon"


def test_an_empty_knowledge_base_unbinds(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/project-map", body={"project": "falcon", "knowledge_base": ""})
    assert answer.body["data"]["project_map"] == {}
    assert knowledge_on.config.scope("falcon").binding is None


def test_the_console_default_is_bound_and_cleared_with_empty_project(api: Api, knowledge_on: Runtime) -> None:
    bound = api.call("POST", "/knowledge/project-map", body={"project": "", "knowledge_base": "harbour"})
    assert bound.body["data"]["default_project"] == "harbour"
    cleared = api.call("POST", "/knowledge/project-map", body={"project": "", "knowledge_base": ""})
    assert cleared.body["data"]["default_project"] == ""


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"project": "nobody-here", "knowledge_base": "harbour"}, 404, "not_found"),
        ({"project": "falcon", "knowledge_base": "no_such_base"}, 404, "not_found"),
        ({"project": "Falcon!", "knowledge_base": "harbour"}, 400, "bad_request"),
        ({"project": "falcon", "knowledge_base": "Proj-X"}, 400, "bad_request"),
        ({"project": "falcon"}, 400, "bad_request"),
    ],
)
def test_project_map_refusals(api: Api, knowledge_on: Runtime, body: dict[str, Any], status: int, code: str) -> None:
    answer = api.call("POST", "/knowledge/project-map", body=body)
    assert (answer.status, answer.body["code"]) == (status, code)
    assert knowledge_on.config.scope("falcon").binding.knowledge_base == "falcon"


def test_project_map_is_503_while_knowledge_is_down(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    forager.set_fault("down")
    answer = api.call("POST", "/knowledge/project-map", body={"project": "falcon", "knowledge_base": ""})
    assert (answer.status, answer.body["code"]) == (503, "knowledge_unreachable")
    assert knowledge_on.config.scope("falcon").binding is not None


def test_projects_proxies_foragers_list(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("GET", "/knowledge/projects")
    refs = {p["project_ref"] for p in answer.body["data"]["projects"]}
    assert {"falcon", "harbour"} <= refs


def test_making_a_base_binds_it_and_logs_the_act(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    answer = api.call(
        "POST",
        "/knowledge/bases",
        body={"name": "Harbour handbook", "description": "What we wrote", "project": "colony-docs"},
        headers={"Idempotency-Key": "caller-key-1"},
    )
    assert answer.status == 200, answer.raw
    data = answer.body["data"]
    made = data["knowledge_base"]
    assert made["state"] == "empty" and made["source_count"] == 0
    assert (data["project"], data["bound"]) == ("colony-docs", True)
    assert data["project_map"]["colony-docs"] == made["project_ref"]
    (post,) = [r for r in forager.requests if r["method"] == "POST"]
    assert post["idempotency_key"] == scoped_key("ada", "POST /knowledge/bases", "caller-key-1")
    (event,) = knowledge_on.events.recent("knowledge_base_created")
    assert event.actor == "ada"
    assert event.payload == {
        "project": "colony-docs",
        "knowledge_base": made["project_ref"],
        "name": "Harbour handbook",
    }


def test_a_replay_with_the_same_idempotency_key_answers_the_same_and_makes_nothing(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    body = {"name": "Once", "project": "colony-docs"}
    first = api.call("POST", "/knowledge/bases", body=body, headers={"Idempotency-Key": "k-42"})
    again = api.call("POST", "/knowledge/bases", body=body, headers={"Idempotency-Key": "k-42"})
    assert first.body == again.body
    assert len([r for r in forager.requests if r["method"] == "POST"]) == 1
    other = api.call("POST", "/knowledge/bases", body={**body, "name": "Twice"}, headers={"Idempotency-Key": "k-42"})
    assert (other.status, other.body["code"]) == (409, "conflict")


BEA = principal(
    "bea",
    *Permission,
    roles={"colony-docs": ProjectRole.ADMIN, "falcon": ProjectRole.ADMIN},
    owns=frozenset({"colony"}),
)


def test_two_callers_sending_one_key_with_different_bodies_each_make_their_own_base(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    knowledge_on.config.unbind("falcon")
    ada = api.call(
        "POST",
        "/knowledge/bases",
        body={"name": "Ada's", "project": "colony-docs"},
        headers={"Idempotency-Key": "shared-key"},
    )
    bea = api.call(
        "POST",
        "/knowledge/bases",
        BEA,
        body={"name": "Bea's", "project": "falcon"},
        headers={"Idempotency-Key": "shared-key"},
    )

    assert (ada.status, bea.status) == (200, 200), (ada.raw, bea.raw)
    assert ada.body["data"]["knowledge_base"]["name"] == "Ada's"
    assert bea.body["data"]["knowledge_base"]["name"] == "Bea's"
    assert ada.body["data"]["knowledge_base"]["project_ref"] != bea.body["data"]["knowledge_base"]["project_ref"]
    keys = [r["idempotency_key"] for r in forager.requests if r["method"] == "POST"]
    assert len(keys) == 2 and len(set(keys)) == 2
    assert "shared-key" not in keys  # the raw caller key never reaches FORAGER


def test_a_second_caller_with_the_same_key_and_body_is_never_answered_the_first_callers_result(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    body = {"name": "Once", "project": "colony-docs"}
    first = api.call("POST", "/knowledge/bases", body=body, headers={"Idempotency-Key": "k-7"})
    second = api.call("POST", "/knowledge/bases", BEA, body=body, headers={"Idempotency-Key": "k-7"})

    assert first.status == 200
    assert (second.status, second.body["code"]) == (409, "already_bound")  # run as its own request, not a replay
    assert knowledge_on.events.recent("knowledge_base_created")[0].actor == "ada"


def test_the_key_forager_sees_is_stable_for_one_caller_so_a_retry_after_a_failure_is_the_same_intent(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_fault("5xx", path_prefix="/api/projects", times=1)
    body = {"name": "Retried", "project": "colony-docs"}
    failed = api.call("POST", "/knowledge/bases", body=body, headers={"Idempotency-Key": "k-9"})
    retried = api.call("POST", "/knowledge/bases", body=body, headers={"Idempotency-Key": "k-9"})

    assert (failed.status, retried.status) == (502, 200)
    keys = [r["idempotency_key"] for r in forager.requests if r["method"] == "POST"]
    assert keys == [scoped_key("ada", "POST /knowledge/bases", "k-9")] * 2


def test_a_bound_project_is_refused_already_bound_before_anything_is_made(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    answer = api.call("POST", "/knowledge/bases", body={"name": "Second", "project": "falcon"})
    assert (answer.status, answer.body["code"]) == (409, "already_bound")
    assert not [r for r in forager.requests if r["method"] == "POST"]


@pytest.mark.parametrize(
    "who",
    [
        principal("pat", Permission.MANAGE_KNOWLEDGE, roles={"colony-docs": ProjectRole.ADMIN}),  # admin elsewhere
        principal("oz", Permission.MANAGE_KNOWLEDGE, owns=frozenset({"other-org"})),  # another organization's owner
        principal("opal", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR}),
    ],
    ids=["admin-elsewhere", "other-owner", "operator"],
)
def test_the_console_default_is_held_to_the_installations_owner_before_its_binding_shows(
    api: Api, knowledge_on: Runtime, forager: Double, who: object
) -> None:
    # Given a bound console default
    knowledge_on.config.bind("", "harbour", "test")
    # When a caller with no standing for it asks for a new base for it
    answer = api.call("POST", "/knowledge/bases", who, body={"name": "Mine"})  # type: ignore[arg-type]
    # Then access refuses it before the binding state can show, and nothing is made
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    assert "installation's organization" in answer.body["message"]
    assert not [r for r in forager.requests if r["method"] == "POST"]


def test_a_project_the_caller_has_no_standing_in_is_answered_as_a_missing_one_byte_for_byte(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    stranger = principal("sam", Permission.MANAGE_KNOWLEDGE, roles={"elsewhere": ProjectRole.ADMIN})
    hidden = api.call("POST", "/knowledge/bases", stranger, body={"name": "X", "project": "falcon"})
    missing = api.call("POST", "/knowledge/bases", stranger, body={"name": "X", "project": "no-such"})
    assert hidden.status == missing.status == 404
    assert hidden.raw == missing.raw.replace("no-such", "falcon")
    viewer = principal("vera", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER})
    assert api.call("POST", "/knowledge/bases", viewer, body={"name": "X", "project": "falcon"}).status == 403


def test_a_foragers_refusal_binds_nothing_and_frees_the_slot(api: Api, knowledge_on: Runtime, forager: Double) -> None:
    forager.set_fault("5xx", path_prefix="/api/projects")
    failed = api.call("POST", "/knowledge/bases", body={"name": "Harbour", "project": "colony-docs"})
    assert (failed.status, failed.body["code"]) == (502, "upstream_error")
    assert knowledge_on.config.scope("colony-docs").binding is None
    forager.clear_faults()
    assert api.call("POST", "/knowledge/bases", body={"name": "Harbour", "project": "colony-docs"}).status == 200


def test_binding_failed_names_the_base_forager_made(
    api: Api, knowledge_on: Runtime, forager: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    def lost(self: ConfigStore, *args: object, **kwargs: object) -> None:
        raise WriteFailed("ConditionalCheckFailedException")

    monkeypatch.setattr(ConfigStore, "complete_reservation", lost)
    answer = api.call("POST", "/knowledge/bases", body={"name": "Orphan", "project": "colony-docs"})
    assert (answer.status, answer.body["code"]) == (500, "binding_failed")
    made = [p for p in forager.state.projects.values() if p.name == "Orphan"]
    assert len(made) == 1
    assert made[0].project_ref in answer.body["message"]
    assert knowledge_on.config.scope("colony-docs").binding is None
    assert knowledge_on.events.recent("knowledge_base_created") == []


def test_the_named_project_must_exist_and_the_caller_be_its_admin(api: Api, knowledge_on: Runtime) -> None:
    missing = api.call("POST", "/knowledge/bases", body={"name": "X", "project": "ghost"})
    assert (missing.status, missing.body["code"]) == (404, "not_found")
    operator = principal(
        "olly", Permission.MANAGE_KNOWLEDGE, roles={"colony-docs": ProjectRole.OPERATOR}, owns=frozenset({"colony"})
    )
    refused = api.call("POST", "/knowledge/bases", operator, body={"name": "X", "project": "colony-docs"})
    assert (refused.status, refused.body["code"]) == (403, "permission_denied")


def test_permission_is_held_before_the_body(api: Api, knowledge_on: Runtime) -> None:
    reader = principal("rita", Permission.READ_KNOWLEDGE)
    answer = api.call("POST", "/knowledge/bases", reader, body={"nonsense": True})
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")


def test_the_body_is_held_before_the_project(api: Api, knowledge_on: Runtime) -> None:
    answer = api.call("POST", "/knowledge/bases", body={"name": "", "project": "ghost"})
    assert (answer.status, answer.body["code"]) == (400, "bad_request")
    assert answer.body["message"].startswith("name:")


def test_knowledge_off_is_503_after_the_project_checks(api: Api, aws: Runtime) -> None:
    aws.projects.create("colony-docs", "colony")
    answer = api.call("POST", "/knowledge/bases", body={"name": "X", "project": "colony-docs"})
    assert (answer.status, answer.body["code"]) == (503, "knowledge_disabled")


def test_a_second_concurrent_base_for_one_project_is_refused_by_the_lock(knowledge_on: Runtime) -> None:
    knowledge_on.config.reserve("colony-docs", "first-request")
    with pytest.raises(Conflict) as refused:
        knowledge_on.config.reserve("colony-docs", "second-request")
    assert refused.value.code == "already_bound"


def test_an_expired_reservation_is_taken_over(knowledge_on: Runtime) -> None:
    knowledge_on.config.reserve("colony-docs", "dead-request", lease_seconds=-1)
    knowledge_on.config.reserve("colony-docs", "live-request")
    assert knowledge_on.config.scope("colony-docs").binding is None  # a reservation is never a binding


# ---------------------------------------------------------------------- binding is the project's own setting
# (issue 39: the probes' cross-organization binds and reads)
OUTSIDER = principal(
    "oz",
    Permission.READ_KNOWLEDGE,
    Permission.MANAGE_KNOWLEDGE,
    roles={"elsewhere": ProjectRole.ADMIN},
    owns=frozenset({"other-org"}),
)


def test_another_organizations_owner_cannot_bind_its_project_to_a_base_of_ours(api: Api, knowledge_on: Runtime) -> None:
    # Given falcon's knowledge base, bound to falcon (colony), and a caller of another organization
    # When it binds its own project to falcon's base, and to a base FORAGER does not hold
    hidden = api.call(
        "POST", "/knowledge/project-map", OUTSIDER, body={"project": "elsewhere", "knowledge_base": "falcon"}
    )
    missing = api.call(
        "POST", "/knowledge/project-map", OUTSIDER, body={"project": "elsewhere", "knowledge_base": "nope"}
    )
    # Then falcon's base is answered as one FORAGER does not hold, byte for byte, and nothing is bound
    assert (hidden.status, hidden.body["code"]) == (404, "not_found")
    assert hidden.raw == missing.raw.replace("nope", "falcon")
    assert knowledge_on.config.scope("elsewhere").binding is None


def test_another_organizations_owner_cannot_rebind_our_project_and_learns_nothing_of_it(
    api: Api, knowledge_on: Runtime
) -> None:
    rebind = api.call(
        "POST", "/knowledge/project-map", OUTSIDER, body={"project": "falcon", "knowledge_base": "harbour"}
    )
    missing = api.call(
        "POST", "/knowledge/project-map", OUTSIDER, body={"project": "ghost", "knowledge_base": "harbour"}
    )
    assert (rebind.status, rebind.body["code"]) == (404, "not_found")
    assert rebind.raw == missing.raw.replace("ghost", "falcon")
    unbind = api.call("POST", "/knowledge/project-map", OUTSIDER, body={"project": "falcon", "knowledge_base": ""})
    assert unbind.raw == rebind.raw
    assert knowledge_on.config.scope("falcon").binding.knowledge_base == "falcon"


@pytest.mark.parametrize(
    "who",
    [
        principal("olga", Permission.MANAGE_KNOWLEDGE, owns=frozenset({"colony"})),  # owner, no role
        principal("opal", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.OPERATOR}),
        principal("vic", Permission.MANAGE_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER}),
    ],
    ids=["roleless-owner", "operator", "viewer"],
)
def test_binding_a_project_takes_its_admin_role(api: Api, knowledge_on: Runtime, who: Any) -> None:
    answer = api.call("POST", "/knowledge/project-map", who, body={"project": "falcon", "knowledge_base": "harbour"})
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    assert "admin role" in answer.body["message"]
    assert knowledge_on.config.scope("falcon").binding.knowledge_base == "falcon"


def test_access_is_held_before_the_binding_state_or_the_base_shows(api: Api, knowledge_on: Runtime) -> None:
    owner = principal("olga", Permission.MANAGE_KNOWLEDGE, owns=frozenset({"colony"}))
    answer = api.call("POST", "/knowledge/project-map", owner, body={"project": "falcon", "knowledge_base": "nope"})
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")


def test_the_console_default_takes_manage_settings(api: Api, knowledge_on: Runtime) -> None:
    # Given an owner of the installation's organization with manage_knowledge alone, and one with
    # manage_settings beside it
    bare = principal("ned", Permission.MANAGE_KNOWLEDGE, owns=frozenset({"colony"}))
    settings = principal("sue", Permission.MANAGE_KNOWLEDGE, Permission.MANAGE_SETTINGS, owns=frozenset({"colony"}))
    body = {"project": "", "knowledge_base": "harbour"}
    # When each binds the console default
    refused = api.call("POST", "/knowledge/project-map", bare, body=body)
    bound = api.call("POST", "/knowledge/project-map", settings, body=body)
    # Then only the holder of manage_settings binds it, and it is answered the map it sees
    assert (refused.status, refused.body["code"]) == (403, "permission_denied")
    assert "manage_settings" in refused.body["message"]
    assert bound.status == 200, bound.raw
    assert bound.body["data"] == {"project_map": {"falcon": "falcon"}, "default_project": "harbour"}


@pytest.mark.parametrize("body", [{"project": "", "knowledge_base": "harbour"}, {"project": "", "knowledge_base": ""}])
def test_the_console_default_is_the_installation_owners_to_set_or_clear(
    api: Api, knowledge_on: Runtime, body: dict[str, str]
) -> None:
    # Given a console default bound by colony, and another organization's owner holding
    # manage_knowledge and manage_settings
    knowledge_on.config.bind("", "falcon", "olga")
    other = principal("otto", Permission.MANAGE_KNOWLEDGE, Permission.MANAGE_SETTINGS, owns=frozenset({"other-org"}))
    # When it sets or clears the console default
    answer = api.call("POST", "/knowledge/project-map", other, body=body)
    # Then it is refused, and the console default still reads colony's base
    assert (answer.status, answer.body["code"]) == (403, "permission_denied")
    assert "installation's organization" in answer.body["message"]
    assert knowledge_on.config.scope("").binding.knowledge_base == "falcon"


def test_a_base_an_organization_made_and_unbound_is_neither_listed_to_nor_bindable_by_another(
    api: Api, knowledge_on: Runtime
) -> None:
    # Given a base colony-docs' admin made (bound to colony-docs), then unbound
    docs_admin = principal(
        "dora", Permission.MANAGE_KNOWLEDGE, Permission.READ_KNOWLEDGE, roles={"colony-docs": ProjectRole.ADMIN}
    )
    made = api.call("POST", "/knowledge/bases", docs_admin, body={"name": "Docs", "project": "colony-docs"})
    assert made.status == 200, made.raw
    ref = made.body["data"]["knowledge_base"]["project_ref"]
    unbound = api.call(
        "POST", "/knowledge/project-map", docs_admin, body={"project": "colony-docs", "knowledge_base": ""}
    )
    assert unbound.status == 200, unbound.raw
    # When another organization's admin lists the bases and binds its own project to it
    outsider = OUTSIDER.model_copy(update={"permissions": OUTSIDER.permissions | {Permission.READ_KNOWLEDGE}})
    bind = api.call("POST", "/knowledge/project-map", outsider, body={"project": "elsewhere", "knowledge_base": ref})
    missing = api.call(
        "POST", "/knowledge/project-map", outsider, body={"project": "elsewhere", "knowledge_base": "nope"}
    )
    # Then the base is not listed to it and is answered as one FORAGER does not hold, byte for byte
    assert ref not in _listed(api, outsider)
    assert (bind.status, bind.body["code"]) == (404, "not_found")
    assert bind.raw == missing.raw.replace("nope", ref)
    assert knowledge_on.config.scope("elsewhere").binding is None
    # And colony's own callers still list it and may bind it again
    assert ref in _listed(api, docs_admin)
    again = api.call(
        "POST", "/knowledge/project-map", docs_admin, body={"project": "colony-docs", "knowledge_base": ref}
    )
    assert again.status == 200, again.raw


def test_a_base_made_before_ownership_belongs_to_the_first_organization_that_binds_it(
    api: Api, knowledge_on: Runtime
) -> None:
    # Given harbour, which FORAGER holds and no organization has made here or bound
    outsider = OUTSIDER.model_copy(update={"permissions": OUTSIDER.permissions | {Permission.READ_KNOWLEDGE}})
    assert "harbour" in _listed(api, outsider)
    # When other-org binds it first, then unbinds it
    first = api.call(
        "POST", "/knowledge/project-map", outsider, body={"project": "elsewhere", "knowledge_base": "harbour"}
    )
    assert first.status == 200, first.raw
    gone = api.call("POST", "/knowledge/project-map", outsider, body={"project": "elsewhere", "knowledge_base": ""})
    assert gone.status == 200, gone.raw
    # Then it stays other-org's: colony's admin neither lists nor binds it
    docs_admin = principal(
        "dora", Permission.MANAGE_KNOWLEDGE, Permission.READ_KNOWLEDGE, roles={"colony-docs": ProjectRole.ADMIN}
    )
    assert "harbour" not in _listed(api, docs_admin)
    bind = api.call(
        "POST", "/knowledge/project-map", docs_admin, body={"project": "colony-docs", "knowledge_base": "harbour"}
    )
    assert (bind.status, bind.body["code"]) == (404, "not_found")
    assert knowledge_on.config.owners() == {"harbour": "other-org"}


def test_the_answer_echoes_the_map_as_the_get_filters_it(api: Api, knowledge_on: Runtime) -> None:
    # Given elsewhere (other-org) bound, and an admin of colony-docs alone
    knowledge_on.config.bind("elsewhere", "falcon", "eve")
    docs_admin = principal(
        "dora", Permission.MANAGE_KNOWLEDGE, Permission.READ_KNOWLEDGE, roles={"colony-docs": ProjectRole.ADMIN}
    )
    answer = api.call(
        "POST", "/knowledge/project-map", docs_admin, body={"project": "colony-docs", "knowledge_base": "harbour"}
    )
    assert answer.status == 200, answer.raw
    # Then falcon's and elsewhere's rows are not echoed: the GET would not show them to it
    assert answer.body["data"] == {"project_map": {"colony-docs": "harbour"}, "default_project": ""}
    listed = api.call("GET", "/knowledge/project-map", docs_admin).body["data"]["bindings"]
    assert {row["project"]: row["knowledge_base"] for row in listed} == answer.body["data"]["project_map"]


def test_a_new_base_answers_the_map_the_caller_sees(api: Api, knowledge_on: Runtime) -> None:
    docs_admin = principal("dora", Permission.MANAGE_KNOWLEDGE, roles={"colony-docs": ProjectRole.ADMIN})
    answer = api.call("POST", "/knowledge/bases", docs_admin, body={"name": "Docs", "project": "colony-docs"})
    assert answer.status == 200, answer.raw
    assert list(answer.body["data"]["project_map"]) == ["colony-docs"]


def _listed(api: Api, who: Any) -> set[str]:
    answer = api.call("GET", "/knowledge/projects", who)
    assert answer.status == 200, answer.raw
    return {p["project_ref"] for p in answer.body["data"]["projects"]}


def _status_projects(api: Api, who: Any) -> set[str]:
    answer = api.call("GET", "/knowledge/status", who)
    assert answer.status == 200, answer.raw
    return set(answer.body["data"]["projects"])


@pytest.mark.parametrize("listing", [_listed, _status_projects], ids=["knowledge-projects", "status-projects"])
def test_a_base_bound_in_an_organization_the_caller_has_no_standing_in_is_not_listed(
    api: Api, knowledge_on: Runtime, listing: Any
) -> None:
    # Given falcon's base bound to falcon (colony), harbour bound to nothing
    nobody = principal("nobody", Permission.READ_STATUS, Permission.READ_KNOWLEDGE)
    outsider = OUTSIDER.model_copy(update={"permissions": OUTSIDER.permissions | {Permission.READ_STATUS}})
    viewer = principal(
        "vic", Permission.READ_STATUS, Permission.READ_KNOWLEDGE, roles={"colony-docs": ProjectRole.VIEWER}
    )
    # Then a caller with no standing in colony does not see falcon's base; one in colony does
    assert "falcon" not in listing(api, nobody)
    assert "falcon" not in listing(api, outsider)
    assert {"falcon", "harbour"} <= listing(api, viewer)  # a role on another of colony's projects
    assert "harbour" in listing(api, outsider)  # bound to no project: listed
    # And a base shared with an organization the caller stands in is the caller's too
    knowledge_on.config.bind("elsewhere", "falcon", "eve")
    assert "falcon" in listing(api, outsider)
    assert "falcon" not in listing(api, nobody)


# ---------------------------------------------------------------------- GET /knowledge/project-map
def _bind_three(rt: Runtime) -> None:
    """falcon (colony) → falcon, colony-docs (colony) → harbour, elsewhere (other-org) → harbour,
    the console default → harbour."""
    rt.config.bind("colony-docs", "harbour", "ada")
    rt.config.bind("elsewhere", "harbour", "eve")
    rt.config.bind("", "harbour", "olga")


def _seen(api: Api, who: Any) -> tuple[list[str], str | None]:
    answer = api.call("GET", "/knowledge/project-map", who)
    assert answer.status == 200, answer.body
    data = answer.body["data"]
    default = data["console_default"]
    return [row["project"] for row in data["bindings"]], None if default is None else default["knowledge_base"]


def test_the_bindings_list_names_each_rows_base_who_bound_it_and_when(api: Api, knowledge_on: Runtime) -> None:
    _bind_three(knowledge_on)
    owner = principal("olga", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"}))
    data = api.call("GET", "/knowledge/project-map", owner).body["data"]
    rows = {row["project"]: row for row in data["bindings"]}
    assert set(rows) == {"colony-docs", "falcon"}
    assert (rows["colony-docs"]["knowledge_base"], rows["colony-docs"]["bound_by"]) == ("harbour", "ada")
    assert rows["colony-docs"]["bound_at"]
    assert data["console_default"]["knowledge_base"] == "harbour"
    assert data["console_default"]["bound_by"] == "olga"


@pytest.mark.parametrize(
    ("who", "projects"),
    [
        (principal("vic", Permission.READ_KNOWLEDGE, roles={"falcon": ProjectRole.VIEWER}), ["falcon"]),
        (principal("olga", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"})), ["colony-docs", "falcon"]),
        (principal("oona", Permission.READ_KNOWLEDGE, owns=frozenset({"other-org"})), ["elsewhere"]),
        (principal("nobody", Permission.READ_KNOWLEDGE), []),
        (
            principal(
                "both", Permission.READ_KNOWLEDGE, roles={"elsewhere": ProjectRole.ADMIN}, owns=frozenset({"colony"})
            ),
            ["colony-docs", "elsewhere", "falcon"],
        ),
    ],
    ids=["viewer-of-falcon", "owner-of-colony", "owner-of-other-org", "no-standing", "role-and-owner"],
)
def test_a_caller_sees_only_the_bindings_of_projects_it_has_standing_in(
    api: Api, knowledge_on: Runtime, who: Any, projects: list[str]
) -> None:
    _bind_three(knowledge_on)
    assert _seen(api, who) == (projects, "harbour")


def test_a_binding_whose_project_record_is_gone_shows_to_no_owner(api: Api, knowledge_on: Runtime) -> None:
    knowledge_on.config.bind("ghost", "harbour", "ada")
    owner = principal("olga", Permission.READ_KNOWLEDGE, owns=frozenset({"colony"}))
    assert _seen(api, owner) == (["falcon"], None)


def test_the_bindings_list_is_503_while_knowledge_is_off_or_down(
    api: Api, knowledge_on: Runtime, forager: Double
) -> None:
    forager.set_fault("down")
    answer = api.call("GET", "/knowledge/project-map")
    assert (answer.status, answer.body["code"]) == (503, "knowledge_unreachable")
    forager.set_fault(None)
    settings = knowledge_on.config.settings().model_copy(update={"knowledge_enabled": False})
    knowledge_on.config.save_settings(settings)
    answer = api.call("GET", "/knowledge/project-map")
    assert (answer.status, answer.body["code"]) == (503, "knowledge_disabled")
