"""GET /modules: the knowledge module at module grain, on five independent axes."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from knowledge_service.base_model import Model
from knowledge_service.domain.status import KnowledgeStatus
from knowledge_service.environment import GATE_ENV_VAR

ENTITLEMENT_NOTE = "The entitled axis is informational. It never gates read, search, export or any safety path."


class AxisState(StrEnum):
    OK = "ok"
    ATTENTION = "attention"
    OFF = "off"
    UNVERIFIABLE = "unverifiable"
    NOT_APPLICABLE = "not_applicable"


class Axis(Model):
    state: AxisState
    ok: bool | None
    condition: str
    next_action: str | None = None
    who_can_fix: str | None = None
    last_successful_check_at: datetime | None = None


class Axes(Model):
    installed: Axis
    configured: Axis
    healthy: Axis
    enabled: Axis
    entitled: Axis


class Module(Model):
    id: str
    label: str
    route: str
    engine: str
    summary: AxisState
    axes: Axes
    first_problem: Axis | None


class ModulesAnswer(Model):
    modules: list[Module]
    entitlement_note: str
    checked_at: datetime


def modules(status: KnowledgeStatus, connect_problem: str | None, now: datetime | None = None) -> ModulesAnswer:
    """The modules this shell hosts: a serverless knowledge service hosts one, knowledge.

    ``connect_problem`` is why the colony cannot even try FORAGER (no endpoint, an endpoint
    the deployment refuses, no credential), or None.
    """
    now = now or datetime.now(UTC)
    axes = Axes(
        installed=Axis(state=AxisState.OK, ok=True, condition="The knowledge module is deployed with this service."),
        configured=_configured(status, connect_problem),
        healthy=_healthy(status, now),
        enabled=_enabled(status),
        entitled=Axis(
            state=AxisState.UNVERIFIABLE,
            ok=None,
            condition="Entitlement for Knowledge has never been checked: no grant service is configured "
            "for this colony.",
        ),
    )
    first_problem = next(
        (axis for axis in (axes.enabled, axes.installed, axes.configured, axes.healthy) if axis.ok is False), None
    )
    if axes.enabled.ok is False:
        summary = AxisState.OFF
    elif False in (axes.installed.ok, axes.configured.ok, axes.healthy.ok):
        summary = AxisState.ATTENTION
    else:
        summary = AxisState.OK
    knowledge = Module(
        id="knowledge",
        label="Knowledge",
        route="/knowledge",
        engine="forager",
        summary=summary,
        axes=axes,
        first_problem=first_problem,
    )
    return ModulesAnswer(modules=[knowledge], entitlement_note=ENTITLEMENT_NOTE, checked_at=now)


def _enabled(status: KnowledgeStatus) -> Axis:
    if status.enabled:
        return Axis(state=AxisState.OK, ok=True, condition="knowledge_enabled is on.")
    if status.gate_env_pinned:
        return Axis(
            state=AxisState.OFF,
            ok=False,
            condition=f"{GATE_ENV_VAR} pins knowledge_enabled off.",
            next_action=f"Unset or change {GATE_ENV_VAR} (the KnowledgeEnabledPin deployment parameter).",
            who_can_fix="administrator",
        )
    return Axis(
        state=AxisState.OFF,
        ok=False,
        condition="knowledge_enabled is off.",
        next_action='Turn knowledge on at Settings › Modules (POST /settings {"knowledge_enabled": true}).',
        who_can_fix="administrator",
    )


def _configured(status: KnowledgeStatus, connect_problem: str | None) -> Axis:
    if not status.configured_endpoint:
        return Axis(
            state=AxisState.ATTENTION,
            ok=False,
            condition="No FORAGER endpoint is configured.",
            next_action="Set knowledge_forager_endpoint on Knowledge › Connection.",
            who_can_fix="administrator",
        )
    if connect_problem:
        return Axis(
            state=AxisState.ATTENTION,
            ok=False,
            condition=connect_problem,
            next_action="Set the endpoint and credential on Knowledge › Connection.",
            who_can_fix="administrator",
        )
    return Axis(state=AxisState.OK, ok=True, condition=f"FORAGER endpoint {status.configured_endpoint}.")


def _healthy(status: KnowledgeStatus, now: datetime) -> Axis:
    if not status.enabled:
        return Axis(state=AxisState.OFF, ok=None, condition="Not checked: knowledge is off.")
    if not status.configured_endpoint:
        return Axis(state=AxisState.NOT_APPLICABLE, ok=None, condition="Not checked: no endpoint is configured.")
    if status.usable:
        return Axis(
            state=AxisState.OK,
            ok=True,
            condition=f"FORAGER {status.version} answers at {status.endpoint}.",
            last_successful_check_at=now,
        )
    return Axis(
        state=AxisState.ATTENTION,
        ok=False,
        condition=status.reason or "FORAGER is not usable.",
        next_action="Check that FORAGER is running and that the endpoint and credential are right "
        "(Knowledge › Connection).",
        who_can_fix="operator",
    )
