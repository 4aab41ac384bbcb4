"""The two study lanes and the sentences a pass says about them (``knowledge_auto_study`` for
the six-hourly poll, ``knowledge_revision_study`` for a revision on the feed).

``knowledge_revision_study`` (resolved) governs what a revision on the feed causes;
``knowledge_auto_study`` governs the six-hourly poll. The sentences are composed here once.
"""

from __future__ import annotations

from knowledge_service.errors import Conflict
from knowledge_service.models import AutoStudy, KnowledgeSettings

POLL_OFF = "The six-hourly poll studied nothing: knowledge_auto_study is 'off'."
REVISIONS_OFF = "Revisions were recorded and acknowledged and not studied: knowledge_revision_study resolves to 'off'."
POLICY_VERSION = 1
ACTION_TYPE = "study_revision"


def lane_sentence(settings: KnowledgeSettings) -> str | None:
    """What is appended to a pass's sentence; None when both lanes are live."""
    poll_off = settings.knowledge_auto_study is AutoStudy.OFF
    revisions_off = settings.revision_study_resolved is AutoStudy.OFF
    if poll_off and not revisions_off:
        return POLL_OFF
    if revisions_off and not poll_off:
        return REVISIONS_OFF
    return None


def refuse_when_no_lane_acts(settings: KnowledgeSettings) -> None:
    """409 conflict naming both settings when neither lane would act."""
    if settings.knowledge_auto_study is AutoStudy.OFF and settings.revision_study_resolved is AutoStudy.OFF:
        raise Conflict(
            "Nothing would be studied: knowledge_auto_study is 'off' and knowledge_revision_study resolves to "
            "'off'. Turn either on to run the pass."
        )
