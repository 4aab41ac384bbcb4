// What FORAGER has published: the feed's head, watermarks, the inbox and actions, a partial
// revision drawn as partial, "update N" by publication sequence, Sync and its sentence.
import { html } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Loaded, Notice, Problem, scoped, useAction, useConsole, useLoad } from "../ui.js";

const update = (row) => (row.publication_sequence != null ? `update ${row.publication_sequence}` : `message ${row.sequence}`);

export default function Published() {
  const { project, refresh } = useConsole();
  const feed = useLoad(() => api.get("/knowledge/feed", scoped(project)), [project]);
  const act = useAction();
  const sync = () =>
    act.run(async () => {
      const answer = await api.post("/knowledge/feed/sync", {}, scoped(project));
      feed.reload();
      refresh();
      return answer;
    }, (answer) => answer.message);
  return html`
    <div class="row">
      ${project ? html`<button type="button" class="primary" disabled=${act.busy} onClick=${sync}>Sync</button>` : html`<p class="muted">Sync runs for a project: pick one in the bar.</p>`}
    </div>
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${feed} what="the feed">
      ${(view) => html`
        ${!view.change_feed ? html`<p>This FORAGER declares no change feed; the colony polls its sources instead.</p>` : null}
        <section class="card" aria-labelledby="head-title">
          <h3 id="head-title">Head</h3>
          ${view.head
            ? html`<p>Update ${view.head.publication_sequence}: <code>${view.head.revision_id}</code>, ${view.head.record_count} records,
                ${view.head.publication_status === "partial"
                  ? html`<strong class="attention">partial</strong> (${view.head.failed_source_count} sources contributed nothing)`
                  : "complete"}.</p>`
            : html`<p>Nothing published yet.</p>`}
          <p>Published updates: ${view.revision_study_resolved}.</p>
        </section>
        <section class="card" aria-labelledby="watermarks-title">
          <h3 id="watermarks-title">Watermarks</h3>
          ${(view.watermarks ?? []).length
            ? html`<table><thead><tr><th scope="col">Generation</th><th scope="col">Epoch</th><th scope="col">Sequence</th><th scope="col">Status</th><th scope="col">Note</th></tr></thead>
                <tbody>${view.watermarks.map((mark, n) => html`<tr key=${n}>
                  <td data-label="Generation"><code>${mark.generation}</code></td><td data-label="Epoch">${mark.epoch}</td>
                  <td data-label="Sequence">${mark.sequence}</td><td data-label="Status">${mark.status}${mark.superseded_by ? " (superseded)" : ""}</td>
                  <td data-label="Note">${mark.note ?? ""}</td></tr>`)}</tbody></table>`
            : html`<p>No watermark yet: nothing has been read from the feed.</p>`}
        </section>
        <section class="card" aria-labelledby="inbox-title">
          <h3 id="inbox-title">Inbox</h3>
          ${view.inbox.length
            ? html`<ul>${view.inbox.map((row) => html`<li key=${row.sequence}>${update(row)} · ${row.event_type}${row.revision_id ? html` <code>${row.revision_id}</code>` : null}</li>`)}</ul>`
            : html`<p>Nothing recorded.</p>`}
          <p class="muted">Kept ${view.retention.inbox_days} days: ${view.retention.derivation}</p>
        </section>
        <section class="card" aria-labelledby="actions-title">
          <h3 id="actions-title">Actions</h3>
          ${view.actions.length
            ? html`<ul>${view.actions.map((row, n) => html`<li key=${n}>${row.action_type} <code>${row.revision_id}</code>: ${row.outcome}${row.republished ? " (republished)" : ""}</li>`)}</ul>`
            : html`<p>No actions.</p>`}
        </section>
        ${view.exports.length
          ? html`<section class="card" aria-labelledby="feed-exports-title"><h3 id="feed-exports-title">Exports on the feed</h3>
              <ul>${view.exports.map((row) => html`<li key=${row.sequence}>message ${row.sequence}: ${row.export_format ?? "unknown format"} <code>${row.export_id ?? ""}</code></li>`)}</ul></section>`
          : null}
      `}
    <//>
  `;
}
