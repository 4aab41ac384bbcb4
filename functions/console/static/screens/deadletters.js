// Dead letters: the selected project's knowledge base's queue (what waits elsewhere named as a
// count), the escalated banner, an entry's details, Replay, Replay after fix (naming the change),
// Discard (with a reason), and the installation's list for a manager.
import { html, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Confirm, Loaded, Notice, Problem, may, scoped, useAction, useAddressed, useConsole, useLoad, when } from "../ui.js";

const FIXES = ["fixed_consumer", "fixed_binding", "fixed_engine"];
const DISCARDS = ["sender_error", "duplicate", "obsolete", "not_applicable", "unrecoverable"];

function Details({ id }) {
  const detail = useLoad(() => api.get(`/knowledge/feed/dead-letters/${encodeURIComponent(id)}`), [id]);
  return html`<${Loaded} load=${detail} what="the entry">
    ${(entry) => html`<dl class="facts">
        <dt>Event</dt><dd>${entry.event_type ?? "unreadable"} ${entry.event_id ? html`<code>${entry.event_id}</code>` : null}</dd>
        <dt>Sequence</dt><dd>${entry.sequence ?? "none"}</dd>
        <dt>Schema</dt><dd>${entry.schema_version} / ${entry.registry_version}</dd>
      </dl>
      <h4>Attempts</h4>
      <ol>${entry.attempt_log.map((attempt) => html`<li>${when(attempt.at)} · ${attempt.error_class} · ${attempt.count}×</li>`)}</ol>
      ${entry.envelope ? html`<h4>Envelope as kept</h4><pre>${entry.envelope}</pre>` : null}`}
  <//>`;
}

function Entry({ entry, installation, act, done }) {
  const { project } = useConsole();
  const [open, setOpen] = useState(false);
  const [fix, setFix] = useState({ reason: FIXES[0], change: "" });
  const [discard, setDiscard] = useState(DISCARDS[0]);
  const post = (path, body, notice) =>
    act.run(async () => {
      const answer = await api.post(`/knowledge/feed/dead-letters/${encodeURIComponent(entry.dead_letter_id)}/${path}`, body);
      done();
      return answer;
    }, notice);
  const label = entry.event_type ?? entry.error_class;
  const where = installation ? { knowledge_base: entry.knowledge_base } : { project };
  return html`<li class="card" aria-label=${"Dead letter " + entry.dead_letter_id}>
    <p><strong>${label}</strong> in <code>${entry.knowledge_base}</code> · ${entry.error_class} · ${entry.attempts} attempts ·
      dead for ${entry.age_days} days${entry.escalated ? html` · <span class="error">escalated</span>` : null}${entry.stopped_stream ? " · stopped its stream" : ""}</p>
    <div class="row">
      <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? "Hide details" : "Details"}</button>
      ${entry.state === "unresolved" && !installation
        ? html`<button type="button" disabled=${act.busy}
            onClick=${() => post("replay", { project, reason: "operator_retry" }, (a) => a.effect)}>Replay</button>`
        : null}
    </div>
    ${open ? html`<${Details} id=${entry.dead_letter_id} />` : null}
    ${entry.state === "unresolved"
      ? html`
        ${installation ? null : html`<form onSubmit=${(event) => {
            event.preventDefault();
            post("replay", { project, reason: fix.reason, after_fix: true, change: fix.change }, (a) => a.effect);
          }} aria-label=${"Replay after fix " + entry.dead_letter_id}>
          <label>What was fixed<select value=${fix.reason} onChange=${(event) => setFix({ ...fix, reason: event.currentTarget.value })}>
            ${FIXES.map((reason) => html`<option value=${reason}>${reason}</option>`)}</select></label>
          <label>The change<input required maxlength="200" value=${fix.change} onInput=${(event) => setFix({ ...fix, change: event.currentTarget.value })} /></label>
          <button type="submit" disabled=${act.busy}>Replay after fix</button>
        </form>`}
        <form onSubmit=${(event) => event.preventDefault()} aria-label=${"Discard " + entry.dead_letter_id}>
          <label>Reason to discard<select value=${discard} onChange=${(event) => setDiscard(event.currentTarget.value)}>
            ${DISCARDS.map((reason) => html`<option value=${reason}>${reason}</option>`)}</select></label>
          <${Confirm} text="Discard" disabled=${act.busy} yes="Discard it"
            question=${`Discard this ${label} for good? It is never applied, it leaves the queue, and the reason "${discard}" is recorded with your name.`}
            onConfirm=${() => post("discard", { ...where, reason: discard }, (a) => `Discarded: ${a.effect}`)} />
        </form>`
      : html`<p class="muted">${entry.state}${entry.resolution ? ` by ${entry.resolution.actor} (${entry.resolution.reason}) ${when(entry.resolution.at)}` : ""}</p>`}
  </li>`;
}

export default function DeadLetters() {
  const { me, project, status, refresh } = useConsole();
  const [whole, setWhole] = useAddressed("installation", "");
  const installation = whole === "1";
  const setInstallation = (on) => setWhole(on ? "1" : "");
  const list = useLoad(
    () => api.get("/knowledge/feed/dead-letters", installation ? { installation: true } : scoped(project)),
    [project, installation],
  );
  const act = useAction();
  const done = () => {
    list.reload();
    refresh();
  };
  const colony = status?.dead_letters;
  return html`
    ${may(me, "manage_knowledge")
      ? html`<label class="check"><input type="checkbox" checked=${installation} onChange=${(event) => setInstallation(event.currentTarget.checked)} />
          The installation's list</label>`
      : null}
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${list} what="the dead letters">
      ${(answer) => html`
        ${answer.counts.escalated
          ? html`<div class="card banner" role="alert">${answer.counts.escalated} dead letters have waited ${answer.escalation_days} days or more: they are escalated, never purged.</div>`
          : null}
        <p>${answer.counts.unresolved} waiting, ${answer.counts.retrying} retrying, ${answer.counts.resolved} resolved${installation ? " across the installation" : " in this knowledge base"}.
          ${!installation && colony && colony.unresolved > answer.counts.unresolved
            ? html` <span class="muted">${colony.unresolved - answer.counts.unresolved} more wait elsewhere (${colony.unreachable} where no project reaches them).</span>`
            : null}</p>
        ${answer.entries.length === 0
          ? html`<p>No dead letters.</p>`
          : html`<ul class="plain">${answer.entries.map(
              (entry) => html`<${Entry} key=${entry.dead_letter_id} entry=${entry} installation=${installation} act=${act} done=${done} />`,
            )}</ul>`}
      `}
    <//>
  `;
}
