"""Who may call each route, typed by hand from the specification
(``../shared/spec/000_…``, "Knowledge API"), never read from the code.

The authorization matrix reads each route's declaration (``access(...)``) back from the
code, so a declaration weakened by mistake would move the matrix with it. This table does
not move: ``tests/unit/test_permissions_table.py`` holds every route of
``edge.catalog.knowledge_routes()`` equal to its row here, and fails on a route that has
no row. A new route joins by adding its row, typed from the specification's own words
(see docs/testing.md).

Each row: (installation permission, project standing, commercial capability or None).
Project standing (``x-project-access``):

- ``installation``: the installation's configuration; no project standing is asked;
- ``read``: any role on the named project, or ownership of its organization;
- ``operator``: the project's operator or admin (the operator's rank: never its viewer), the console default only for
  an owner of the installation's organization;
- ``admin``: the project's admin.
"""

from __future__ import annotations

from typing import NamedTuple

from knowledge_service.edge.access import Standing
from knowledge_service.identity.principal import Permission

READ_STATUS = Permission.READ_STATUS
READ_KNOWLEDGE = Permission.READ_KNOWLEDGE
MANAGE_KNOWLEDGE = Permission.MANAGE_KNOWLEDGE
MANAGE_SETTINGS = Permission.MANAGE_SETTINGS

INSTALLATION = Standing.INSTALLATION
READ = Standing.READ
OPERATOR = Standing.OPERATOR
ADMIN = Standing.ADMIN


class Access(NamedTuple):
    permission: Permission
    project: Standing
    capability: str | None = None


PERMISSIONS: dict[tuple[str, str], Access] = {
    # --- status and settings -------------------------------------------------------------
    # "GET /knowledge/status": the one route that answers when knowledge is off (read_status).
    ("GET", "/knowledge/status"): Access(READ_STATUS, INSTALLATION),
    ("GET", "/knowledge/engine"): Access(READ_STATUS, INSTALLATION),
    ("GET", "/modules"): Access(READ_STATUS, INSTALLATION),
    # "posts {"knowledge_enabled": true} to POST /settings under manage_settings"
    ("POST", "/settings"): Access(MANAGE_SETTINGS, INSTALLATION),
    # --- bindings --------------------------------------------------------------------------
    # "POST /knowledge/project-map — manage_knowledge"; which knowledge base a project reads "is
    # one of its settings", held to its project admin (the ruling "Binding is a project's own
    # setting", issue 39); the console default takes manage_settings beside it and ownership of
    # the installation's organization (tests/authorization_matrix.py, CONSOLE_DEFAULT_SETTINGS).
    ("POST", "/knowledge/project-map"): Access(MANAGE_KNOWLEDGE, ADMIN),
    # "lists every binding, with Study and Unbind per row, the console default with its own
    # Unbind" (Connection, All bindings): a read of the installation's map (issue 28's ruling:
    # read_knowledge, each row shown only where the caller has the reads' standing).
    ("GET", "/knowledge/project-map"): Access(READ_KNOWLEDGE, INSTALLATION),
    # "GET /knowledge/projects, proxying the producer's GET /api/projects": what FORAGER holds.
    ("GET", "/knowledge/projects"): Access(READ_KNOWLEDGE, INSTALLATION),
    # "POST /knowledge/bases — manage_knowledge (K2)": the commercial gate
    # (platform.project.manage), "a named project … held to its project admin".
    ("POST", "/knowledge/bases"): Access(MANAGE_KNOWLEDGE, ADMIN, "platform.project.manage"),
    # --- reads: "All are knowledge.read in the catalog … never gated", resolved through ?project=
    ("GET", "/knowledge/search"): Access(READ_KNOWLEDGE, READ),
    ("POST", "/knowledge/retrieve"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/items/{id}"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/items/{id}/evidence"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/entities"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/entities/{id}"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/statements"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/duplicates"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/sources"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/sources/{id}"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/conflicts"): Access(READ_KNOWLEDGE, READ),
    # --- the change feed -----------------------------------------------------------------
    # "GET /knowledge/feed?project= … (read_knowledge)"
    ("GET", "/knowledge/feed"): Access(READ_KNOWLEDGE, READ),
    # "POST /knowledge/feed/sync -> one pass of the feed, now (manage_knowledge)"; queues missions
    # in the project, an operator's act.
    ("POST", "/knowledge/feed/sync"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # --- knowledge changes ---------------------------------------------------------------
    # "GET /knowledge/changes?status=open -> findings (read_knowledge)"
    ("GET", "/knowledge/changes"): Access(READ_KNOWLEDGE, READ),
    # "POST /knowledge/changes/scan -> run the analysis NOW and queue nothing (read_knowledge)"
    ("POST", "/knowledge/changes/scan"): Access(READ_KNOWLEDGE, READ),
    # "POST /knowledge/changes/{id}/queue … (manage_knowledge)", "…/dismiss … (manage_knowledge)"
    ("POST", "/knowledge/changes/{id}/queue"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/changes/{id}/dismiss"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # "Queueing carries manage_knowledge for the same reason seeding does"
    ("POST", "/knowledge/seed"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # --- ingestion ------------------------------------------------------------------------
    # "POST /knowledge/jobs — manage_knowledge"; "POST /knowledge/upload — manage_knowledge";
    # "POST /knowledge/preflight — manage_knowledge". Queueing work spends the engine's time on
    # the project's knowledge base: an operator's act in the named project (its admin or operator). The
    # upload session is the first half of POST /knowledge/upload and takes what it takes.
    ("POST", "/knowledge/jobs"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/jobs/{id}/cancel"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/jobs/{id}/retry"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/upload"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/upload/sessions"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/preflight"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # "GET /knowledge/jobs -> recent jobs", "GET /knowledge/jobs/{id} -> real persisted stage
    # state": reads of the project's knowledge base, like every read (read_knowledge).
    ("GET", "/knowledge/jobs"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/jobs/{id}"): Access(READ_KNOWLEDGE, READ),
    # --- curation and exports -------------------------------------------------------------
    # FORAGER's own application's writes (K2): "resolved through ?project= at the operator's
    # rank"; "Curation is manage_knowledge, and forager.knowledge.curate in the catalog … each
    # curation route asks the commercial gate"; "Exporting is read_knowledge and knowledge.export,
    # never gated" (a base capability: declared, and no subscription state refuses it).
    ("POST", "/knowledge/conflicts/{id}/resolve"): Access(MANAGE_KNOWLEDGE, OPERATOR, "forager.knowledge.curate"),
    ("POST", "/knowledge/conflicts/{id}/reopen"): Access(MANAGE_KNOWLEDGE, OPERATOR, "forager.knowledge.curate"),
    ("POST", "/knowledge/duplicates/{id}/decide"): Access(MANAGE_KNOWLEDGE, OPERATOR, "forager.knowledge.curate"),
    ("POST", "/knowledge/entities/{id}/unmerge"): Access(MANAGE_KNOWLEDGE, OPERATOR, "forager.knowledge.curate"),
    ("POST", "/knowledge/items/{id}/review"): Access(MANAGE_KNOWLEDGE, OPERATOR, "forager.knowledge.curate"),
    ("GET", "/knowledge/exports"): Access(READ_KNOWLEDGE, READ, "knowledge.export"),
    ("POST", "/knowledge/exports"): Access(READ_KNOWLEDGE, OPERATOR, "knowledge.export"),
    ("GET", "/knowledge/exports/{id}"): Access(READ_KNOWLEDGE, READ, "knowledge.export"),
    # "read_knowledge, and the project's operator or admin"
    ("GET", "/knowledge/exports/{id}/download"): Access(READ_KNOWLEDGE, OPERATOR, "knowledge.export"),
    # "GET /knowledge/events (manage_knowledge; ?project=, ?act=, newest first, cursor paging)":
    # the operator's record of who decided what (issue 11), read in the named project.
    ("GET", "/knowledge/events"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # --- dead letters ---------------------------------------------------------------------
    # "GET /knowledge/feed/dead-letters?project=&state=unresolved -> the queue for that knowledge
    # base (read_knowledge)"; "?installation=true -> every knowledge base's queue
    # (manage_knowledge)", held by the route itself; "GET …/{id}?project= -> one entry whole
    # (read_knowledge)"; "POST …/{id}/replay" and "…/discard" (manage_knowledge), "with the
    # caller's standing in that project" (an operator's act).
    ("GET", "/knowledge/feed/dead-letters"): Access(READ_KNOWLEDGE, READ),
    ("GET", "/knowledge/feed/dead-letters/{id}"): Access(READ_KNOWLEDGE, READ),
    ("POST", "/knowledge/feed/dead-letters/{id}/replay"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    ("POST", "/knowledge/feed/dead-letters/{id}/discard"): Access(MANAGE_KNOWLEDGE, OPERATOR),
    # --- the console's session (issue 27) ---------------------------------------------------
    # "Signing in takes a principal's token once ... and exchanges it for a session", "held to
    # the same permissions, roles and scope rules": an installation act that reads nothing of
    # a project. The console's first screen is the status card, so opening one, ending it and
    # asking who one is take what the status card takes (read_status); "who am I, with my
    # permissions, roles and the projects I may pick" is the caller's own record.
    ("POST", "/knowledge/session"): Access(READ_STATUS, INSTALLATION),
    ("DELETE", "/knowledge/session"): Access(READ_STATUS, INSTALLATION),
    ("GET", "/knowledge/me"): Access(READ_STATUS, INSTALLATION),
}
"""Every route this branch serves."""

NOT_YET_BUILT: dict[tuple[str, str], Access] = {}
"""Rows typed from the specification ahead of their routes. A route of the code is looked up
in both tables; a row here whose route is served moves up into ``PERMISSIONS``."""


# --- agent tools over MCP -------------------------------------------------------------------
# "No tool takes a project or scope argument ... Scope arrives ambiently ... entered by the
# core at mission intake" (spec 000, "Agent tools"): POST /mcp takes no principal token and
# no installation permission; the mission credential alone admits a call, and its record is
# the project, the role's tools and the autonomy.
MISSION_ROUTES: dict[tuple[str, str], str] = {
    ("POST", "/mcp"): "mission_credential",
}

# --- the console's own files ----------------------------------------------------------------
# "serving the console at /console/ from the same origin as the API": the files hold no data,
# and the sign-in page must load before anyone has signed in. Answered to anyone, and only here.
PUBLIC_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("GET", "/console"),
        ("GET", "/console/{a}"),
        ("GET", "/console/{a}/{b}"),
        ("GET", "/console/{a}/{b}/{c}"),
    }
)
