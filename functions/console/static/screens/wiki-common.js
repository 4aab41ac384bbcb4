// What the wiki's modules share: the pages API (/api/v1/projects/{id}/kb/*), how a page, a version
// and a writer are named for people, and the small pieces every view draws. docs/console.md, The wiki.
import { html } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { when } from "../ui.js";
import * as route from "../route.js";

export const TRUST = {
  unverified: "Unverified",
  human_reviewed: "Reviewed by a person",
  machine_confirmed: "Confirmed by a machine",
  edited_since_review: "Edited since its review",
};

/**
 * The pages API: its 401 means "not this project's admin" as often as "signed out", so a 401 does
 * not end the session here; /knowledge/me then decides (and signs out when the session is gone).
 */
export async function call(method, path, options = {}) {
  try {
    return await api.request(method, path, { ...options, keepSession: true });
  } catch (error) {
    if (error.status === 401) await api.get("/knowledge/me"); // rejects, and signs out, if the session ended
    throw error;
  }
}
export const get = (path, query) => call("GET", path, { query });
export const post = (path, body = {}) => call("POST", path, { body });

export const kb = (project) => `/api/v1/projects/${encodeURIComponent(project)}/kb`;
export const pageUrl = (project, path) =>
  `${kb(project)}/pages/${path.replace(/^\/fs\//, "").split("/").map(encodeURIComponent).join("/")}`;
export const short = (version) => (version ? version.replace(/^sha256:/, "").slice(0, 10) : "none");

/** Who wrote: the principal's name the API keeps beside the spec's actor word (a person's writes
 * are `human` there), else the actor itself (an agent's writes name the agent). */
export const who = (principal, actor) => principal || actor || "someone";
export const versionWho = (v) => who(v.principal, v.actor);
export const rowWho = (row) => who(row.last_write_principal, row.last_write_by);

/** A version as people name it: when, who, and what the write said. */
export const versionName = (v) =>
  `${when(v.at)} · ${versionWho(v)}${v.summary ? " · " + v.summary : ` · ${v.op}`}${v.current ? " (current)" : ""}`;
export const needsReview = (row) => row.type === "file" && row.trust && row.trust !== "human_reviewed";

export const go = (params) => route.go("wiki", params);

export const fileName = (path) => path.slice(path.lastIndexOf("/") + 1);

/** A page's name for people: its title (frontmatter, else its first heading), else its file name. */
export const titleOf = (row) => row?.title || fileName(row?.path ?? "");

/** Every row of the base (meta=1), paged past the 500-entry cap with `after`. */
export async function listAll(project) {
  const rows = [];
  let after;
  for (let page = 0; page < 40; page += 1) {
    const answer = await get(`${kb(project)}/pages`, { meta: 1, limit: 500, after });
    rows.push(...answer.entries);
    if (!answer.truncated || answer.entries.length === 0) break;
    after = answer.entries[answer.entries.length - 1].path;
  }
  return rows;
}

export function Tags({ tags }) {
  if (!tags || tags.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="tags">${tags.map((tag) => html`<li key=${tag}>${tag}</li>`)}</ul>`;
}

export function Trust({ row }) {
  if (!row?.trust) return html`<span class="muted">unknown</span>`;
  return html`<span class=${"trust trust-" + row.trust}>${TRUST[row.trust] ?? row.trust}</span>`;
}

/** The browser tab names what is shown: `<what> · Wiki · Knowledge console`, so tabs, history and
 * bookmarks tell pages apart. */
export function setTitle(what) {
  document.title = what ? `${what} · Wiki · Knowledge console` : "Wiki · Knowledge console";
}

/** Escape, as every dialog and editor of the wiki reads it: not while a composition is open. */
export const isEscape = (event) => event.key === "Escape" && !event.isComposing && !event.defaultPrevented;
