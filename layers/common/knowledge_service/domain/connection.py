"""Opening FORAGER for the settings in force: endpoint policy, credential, client."""

from __future__ import annotations

from knowledge_service.domain.endpoint_policy import EndpointRefused, check_endpoint
from knowledge_service.domain.gate import require_enabled
from knowledge_service.domain.settings import BEARER_SAFE
from knowledge_service.environment import Environment
from knowledge_service.errors import KnowledgeUnreachable
from knowledge_service.models import KnowledgeSettings
from knowledge_service.storage.credential import CredentialStore
from knowledge_service.upstream.client import ForagerClient, ForagerClients


class ForagerConnection:
    """Builds the FORAGER client per call (the settings may have changed), on one pool."""

    def __init__(self, env: Environment, credentials: CredentialStore, clients: ForagerClients | None = None):
        self._env = env
        self._credentials = credentials
        self._clients = clients or ForagerClients(env.forager_timeout_seconds)

    def configured_endpoint(self, settings: KnowledgeSettings) -> str:
        if settings.knowledge_forager_endpoint is not None:
            return settings.knowledge_forager_endpoint
        return self._env.knowledge_forager_endpoint

    def why_not_connectable(self, settings: KnowledgeSettings) -> str | None:
        """The reason the colony cannot even try FORAGER, or None."""
        endpoint = self.configured_endpoint(settings)
        if not endpoint:
            return "No FORAGER endpoint is configured."
        try:
            check_endpoint(
                endpoint,
                allow_remote=self._env.knowledge_forager_allow_remote,
                allowed_hosts=self._env.knowledge_forager_allowed_hosts,
            )
        except EndpointRefused as refused:
            return f"The configured endpoint {refused}"
        credential = self._credentials.read()
        if not credential:
            return "No FORAGER credential is configured."
        if not BEARER_SAFE.match(credential):
            return "The stored FORAGER credential cannot be sent as a bearer token; write it again."
        return None

    def client(self, settings: KnowledgeSettings) -> ForagerClient:
        """The client for a route that needs FORAGER: 503 while knowledge is off or cannot be reached."""
        require_enabled(settings, self._env)
        reason = self.why_not_connectable(settings)
        if reason:
            raise KnowledgeUnreachable(reason)
        credential = self._credentials.read() or ""
        return self._clients.client(self.configured_endpoint(settings), credential)

    def answering(self, settings: KnowledgeSettings) -> ForagerClient:
        """The client once FORAGER has answered ``GET /api/status``.

        For a route that reads or writes only the colony's own records (findings): the
        specification holds every route but ``GET /knowledge/status`` to 503 while knowledge
        is off or down, so such a route asks FORAGER first and answers as any other would
        (503 unreachable, 504 no answer in time, 502 a wrong answer) before it touches a table.
        """
        client = self.client(settings)
        client.status()
        return client
