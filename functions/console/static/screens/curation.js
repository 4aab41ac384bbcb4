// Curation: Conflicts (Resolve, Reopen, with notes), Duplicates (Merge, Keep apart), entities
// (Unmerge), item review; the commercial gate's 402 shown as what it is.
import { html, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Loaded, Notice, scoped, useAction, useAddressed, useConsole, useLoad, when } from "../ui.js";

const ACTIONS = {
  contradiction: ["accept_winner", "keep_both", "dismiss"],
  duplicate: ["archive_duplicates", "keep_both", "dismiss"],
};

function Refusal({ error }) {
  if (!error) return null;
  if (error.status === 402) {
    return html`<p class="error" role="alert">Not included in this colony's subscription (402): ${error.message}</p>`;
  }
  return html`<p class="error" role="alert">${error.message}</p>`;
}

function Conflict({ conflict, act, done }) {
  const { project } = useConsole();
  const actions = ACTIONS[conflict.type] ?? ["keep_both", "dismiss"];
  // the winner preselected is FORAGER's suggestion when it has one, else none: the person picks
  const suggested = conflict.sides.some((side) => side.knowledge_id === conflict.suggested_winner_id) ? conflict.suggested_winner_id : "";
  const [choice, setChoice] = useState({ action: actions[0], winner_id: suggested, notes: "" });
  const decided = conflict.status !== "open";
  const resolve = (event) => {
    event.preventDefault();
    const body = { action: choice.action };
    if (choice.action === "accept_winner") body.winner_id = choice.winner_id;
    if (choice.notes.trim()) body.notes = choice.notes;
    act.run(async () => {
      await api.post(`/knowledge/conflicts/${encodeURIComponent(conflict.conflict_id)}/resolve`, body, scoped(project));
      done();
    }, `Resolved ${conflict.title}.`);
  };
  const reopen = () =>
    act.run(async () => {
      await api.post(`/knowledge/conflicts/${encodeURIComponent(conflict.conflict_id)}/reopen`, {}, scoped(project));
      done();
    }, `Reopened ${conflict.title}.`);
  return html`<li class="card" aria-label=${"Conflict " + conflict.title}>
    <p><strong>${conflict.title}</strong> · ${conflict.type} · ${conflict.status}</p>
    <ol>${conflict.sides.map((side) => html`<li key=${side.knowledge_id}>${side.statement} <code>${side.knowledge_id}</code></li>`)}</ol>
    ${conflict.suggested_resolution ? html`<p class="muted">FORAGER suggests: ${conflict.suggested_resolution} (never applied for you)</p>` : null}
    ${decided
      ? html`<p>Decided: ${conflict.decision?.action}${conflict.decision?.decided_by ? ` by ${conflict.decision.decided_by}` : ""} ${when(conflict.decision?.decided_at)}</p>
          <button type="button" disabled=${act.busy} onClick=${reopen}>Reopen</button>`
      : html`<form onSubmit=${resolve} aria-label=${"Resolve " + conflict.title}>
          <label>Decision<select value=${choice.action} onChange=${(event) => setChoice({ ...choice, action: event.currentTarget.value })}>
            ${actions.map((action) => html`<option value=${action}>${action.replace("_", " ")}</option>`)}</select></label>
          ${choice.action === "accept_winner"
            ? html`<label>Winner<select value=${choice.winner_id} onChange=${(event) => setChoice({ ...choice, winner_id: event.currentTarget.value })}>
                ${suggested ? null : html`<option value="">Choose the side that wins</option>`}
                ${conflict.sides.map((side, n) => html`<option value=${side.knowledge_id}>side ${n + 1}${side.knowledge_id === suggested ? " (FORAGER's suggestion)" : ""}</option>`)}</select></label>`
            : null}
          <label>Notes<input maxlength="2000" value=${choice.notes} onInput=${(event) => setChoice({ ...choice, notes: event.currentTarget.value })} /></label>
          <button type="submit" class="primary" disabled=${act.busy || (choice.action === "accept_winner" && !choice.winner_id)}>Resolve</button>
        </form>`}
  </li>`;
}

function Conflicts() {
  const { project } = useConsole();
  const [status, setStatus] = useAddressed("conflicts", "open");
  const list = useLoad(() => api.get("/knowledge/conflicts", { ...scoped(project), status }), [project, status]);
  const act = useAction();
  return html`<section class="card" aria-labelledby="conflicts-title">
    <h3 id="conflicts-title">Conflicts</h3>
    <label>Show<select value=${status} onChange=${(event) => setStatus(event.currentTarget.value)}>
      ${["open", "decided", "resolved", "dismissed", "all"].map((value) => html`<option value=${value}>${value}</option>`)}</select></label>
    <${Refusal} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${list} what="the conflicts">
      ${(answer) =>
        answer.conflicts.length === 0
          ? html`<p>No ${status} conflicts.</p>`
          : html`<ul class="plain">${answer.conflicts.map(
              (conflict) => html`<${Conflict} key=${conflict.conflict_id + conflict.status} conflict=${conflict} act=${act} done=${list.reload} />`,
            )}</ul>`}
    <//>
  </section>`;
}

function Duplicates() {
  const { project } = useConsole();
  const list = useLoad(() => api.get("/knowledge/duplicates", scoped(project)), [project]);
  const act = useAction();
  const [notes, setNotes] = useState("");
  const decide = (duplicate, action) =>
    act.run(
      async () => {
        const body = notes.trim() ? { action, notes } : { action };
        const answer = await api.post(`/knowledge/duplicates/${encodeURIComponent(duplicate.candidate_id)}/decide`, body, scoped(project));
        list.reload();
        return answer;
      },
      (answer) => (answer.merged ? `Merged ${answer.merged_away.name} into ${answer.kept.name}.` : "Kept apart."),
    );
  const unmerge = (entity) =>
    act.run(
      () => api.post(`/knowledge/entities/${encodeURIComponent(entity.entity_id)}/unmerge`, {}, scoped(project)),
      (answer) => `Unmerged ${answer.restored.name} from ${answer.winner.name}.`,
    );
  return html`<section class="card" aria-labelledby="duplicates-title">
    <h3 id="duplicates-title">Duplicates</h3>
    <label>Notes for the next decision<input maxlength="2000" value=${notes} onInput=${(event) => setNotes(event.currentTarget.value)} /></label>
    <${Refusal} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${list} what="the possible duplicates">
      ${(answer) =>
        answer.duplicates.length === 0
          ? html`<p>No possible duplicates.</p>`
          : html`<table>
              <thead><tr><th scope="col">One</th><th scope="col">The other</th><th scope="col">Why</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
              <tbody>${answer.duplicates.map(
                (duplicate) => html`<tr key=${duplicate.candidate_id}>
                  <td data-label="One">${duplicate.entity_a.name}</td>
                  <td data-label="The other">${duplicate.entity_b.name}</td>
                  <td data-label="Why">${duplicate.reason} (${duplicate.confidence})</td>
                  <td data-label="Status">${duplicate.status}</td>
                  <td>${duplicate.status === "pending"
                    ? html`<div class="row">
                        <button type="button" disabled=${act.busy} aria-label=${`Merge ${duplicate.entity_a.name} and ${duplicate.entity_b.name}`}
                          onClick=${() => decide(duplicate, "merge")}>Merge</button>
                        <button type="button" disabled=${act.busy} aria-label=${`Keep apart ${duplicate.entity_a.name} and ${duplicate.entity_b.name}`}
                          onClick=${() => decide(duplicate, "keep_apart")}>Keep apart</button></div>`
                    : duplicate.status === "merged"
                      ? html`<button type="button" disabled=${act.busy} aria-label=${"Unmerge " + duplicate.entity_b.name}
                          onClick=${() => unmerge(duplicate.entity_b)}>Unmerge</button>`
                      : null}</td>
                </tr>`,
              )}</tbody>
            </table>`}
    <//>
  </section>`;
}

function Review() {
  const { project } = useConsole();
  const [form, setForm] = useState({ id: "", action: "mark_reviewed", notes: "" });
  const act = useAction();
  const submit = (event) => {
    event.preventDefault();
    const body = form.notes.trim() ? { action: form.action, notes: form.notes } : { action: form.action };
    act.run(
      () => api.post(`/knowledge/items/${encodeURIComponent(form.id.trim())}/review`, body, scoped(project)),
      (answer) => `${answer.knowledge_id} is ${answer.review_status}.`,
    );
  };
  return html`<section class="card" aria-labelledby="review-title">
    <h3 id="review-title">Item review</h3>
    <form onSubmit=${submit}>
      <label>Item id<input required pattern="ki_[0-9a-f]{16}" value=${form.id} onInput=${(event) => setForm({ ...form, id: event.currentTarget.value })} /></label>
      <label>Review<select value=${form.action} onChange=${(event) => setForm({ ...form, action: event.currentTarget.value })}>
        <option value="mark_reviewed">mark reviewed</option><option value="reject">reject</option><option value="restore">restore</option></select></label>
      <label>Review notes<input maxlength="2000" value=${form.notes} onInput=${(event) => setForm({ ...form, notes: event.currentTarget.value })} /></label>
      <button type="submit" disabled=${act.busy}>Review</button>
    </form>
    <${Refusal} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
  </section>`;
}

export default function Curation() {
  return html`<${Conflicts} /><${Duplicates} /><${Review} />`;
}
