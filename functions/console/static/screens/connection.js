// Connection: the status card (not configured / unreachable / working, with the reason), Enable
// knowledge, the settings the console may write, All bindings with the console default, bind by
// typed ids.
import { html, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { EnableKnowledge } from "../enable.js";
import { Confirm, Notice, Problem, connectionState, may, useAction, useConsole, when } from "../ui.js";

const TITLES = { off: "Not configured", unreachable: "Unreachable", working: "Working" };

function StatusCard({ status }) {
  const state = connectionState(status);
  return html`<section class=${"card " + state.key} aria-labelledby="status-title">
    <h3 id="status-title">Status: ${TITLES[state.key]}</h3>
    ${status.reason ? html`<p>${status.reason}</p>` : null}
    <dl class="facts">
      <dt>Endpoint</dt><dd><code>${status.configured_endpoint || "none"}</code></dd>
      ${status.version ? html`<dt>FORAGER</dt><dd>${status.version} · ${status.search_backend} · ${status.model_provider}</dd>` : null}
      <dt>Study schedule</dt><dd>${status.auto_study}</dd>
      <dt>Published updates</dt><dd>${status.revision_study_resolved} (${status.revision_study})</dd>
      <dt>ANTHILL package</dt><dd>${status.package_agreement}${status.package_note ? " — " + status.package_note : ""}</dd>
      <dt>Open changes</dt><dd>${status.open_changes}</dd>
      <dt>Dead letters</dt><dd>${status.dead_letters.unresolved} waiting, ${status.dead_letters.escalated} escalated</dd>
    </dl>
    <${EnableKnowledge} />
  </section>`;
}

// Saving may change the values Settings is keyed by (its form starts again from what was saved),
// so the sentence saying it was saved is kept by Connection: it outlives the form it came from.
function Settings({ status, refresh, saved, setSaved }) {
  const act = useAction();
  const [form, setForm] = useState({
    knowledge_auto_study: status.auto_study,
    knowledge_revision_study: status.revision_study,
    knowledge_forager_endpoint: status.configured_endpoint,
    knowledge_forager_token: "",
  });
  const field = (key) => (event) => setForm({ ...form, [key]: event.currentTarget.value });
  const save = (event) => {
    event.preventDefault();
    const body = { ...form };
    if (!body.knowledge_forager_token) delete body.knowledge_forager_token;
    act.run(async () => {
      setSaved(null);
      const view = await api.post("/settings", body);
      setForm({ ...form, knowledge_forager_token: "" });
      setSaved(`Settings saved; the credential is ${view.knowledge_forager_token_set ? "set" : "not set"}.`);
      refresh();
      return view;
    });
  };
  const choice = (value) => html`<option value=${value}>${value}</option>`;
  return html`<section class="card" aria-labelledby="settings-title">
    <h3 id="settings-title">Settings</h3>
    <form onSubmit=${save}>
      <label>Study schedule<select value=${form.knowledge_auto_study} onChange=${field("knowledge_auto_study")}>
        ${["off", "suggest", "on"].map(choice)}</select></label>
      <label>What a published update does<select value=${form.knowledge_revision_study} onChange=${field("knowledge_revision_study")}>
        ${["inherit", "off", "suggest", "on"].map(choice)}</select></label>
      <label>Endpoint<input type="url" value=${form.knowledge_forager_endpoint} onInput=${field("knowledge_forager_endpoint")} /></label>
      <label>Credential (written, never shown)<input type="password" autocomplete="off" value=${form.knowledge_forager_token}
        onInput=${field("knowledge_forager_token")} /></label>
      <button type="submit" disabled=${act.busy}>Save settings</button>
    </form>
    <${Problem} error=${act.error} />
    ${saved ? html`<${Notice} text=${saved} />` : null}
  </section>`;
}

function AllBindings({ bindings, manage, refresh }) {
  const act = useAction();
  const bind = (project, knowledge_base, notice) =>
    act.run(async () => {
      await api.post("/knowledge/project-map", { project, knowledge_base });
      refresh();
    }, notice);
  const study = (project) => act.run(() => api.post("/knowledge/seed", {}, { project }), (answer) => answer.message);
  const [typed, setTyped] = useState({ project: "", knowledge_base: "" });
  const byIds = (event) => {
    event.preventDefault();
    bind(typed.project, typed.knowledge_base, `${typed.project} now reads ${typed.knowledge_base}.`).then(() =>
      setTyped({ project: "", knowledge_base: "" }),
    );
  };
  const fallback = bindings.console_default;
  return html`<section class="card" aria-labelledby="bindings-title">
    <h3 id="bindings-title">All bindings</h3>
    <table>
      <thead><tr><th scope="col">Project</th><th scope="col">Knowledge base</th><th scope="col">Bound</th>${manage ? html`<th scope="col">Actions</th>` : null}</tr></thead>
      <tbody>
        ${bindings.bindings.map(
          (row) => html`<tr key=${row.project}>
            <td data-label="Project">${row.project}</td>
            <td data-label="Knowledge base"><code>${row.knowledge_base}</code></td>
            <td data-label="Bound">${row.bound_by ?? ""} ${when(row.bound_at)}</td>
            ${manage
              ? html`<td><div class="row">
                  <button type="button" aria-label=${"Study " + row.project} disabled=${act.busy} onClick=${() => study(row.project)}>Study</button>
                  <${Confirm} text="Unbind" label=${"Unbind " + row.project} disabled=${act.busy} yes=${"Unbind " + row.project}
                    question=${`${row.project} will read no knowledge base (it reads ${row.knowledge_base} now). Nothing in FORAGER is deleted.`}
                    onConfirm=${() => bind(row.project, "", `${row.project} reads no knowledge base now.`)} />
                </div></td>`
              : null}
          </tr>`,
        )}
        <tr>
          <td data-label="Project">Console default</td>
          <td data-label="Knowledge base">${fallback ? html`<code>${fallback.knowledge_base}</code>` : html`<span class="muted">none</span>`}</td>
          <td data-label="Bound">${fallback ? `${fallback.bound_by ?? ""} ${when(fallback.bound_at)}` : ""}</td>
          ${manage
            ? html`<td>${fallback
                ? html`<${Confirm} text="Unbind" label="Unbind the console default" disabled=${act.busy} yes="Unbind the console default"
                    question=${`The console default will read no knowledge base (it reads ${fallback.knowledge_base} now): a section opened for it shows nothing. Nothing in FORAGER is deleted.`}
                    onConfirm=${() => bind("", "", "The console default reads no knowledge base now.")} />`
                : null}</td>`
            : null}
        </tr>
      </tbody>
    </table>
    ${manage
      ? html`<form onSubmit=${byIds} aria-label="Bind by typed ids">
          <label>Project id<input required value=${typed.project} onInput=${(event) => setTyped({ ...typed, project: event.currentTarget.value })} /></label>
          <label>Knowledge base id<input required value=${typed.knowledge_base}
            onInput=${(event) => setTyped({ ...typed, knowledge_base: event.currentTarget.value })} /></label>
          <button type="submit" disabled=${act.busy}>Bind by ids</button>
        </form>`
      : null}
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
  </section>`;
}

export default function Connection() {
  const { me, status, bindings, refresh } = useConsole();
  const [saved, setSaved] = useState(null);
  if (!status) return html`<p class="muted" role="status">Reading the status…</p>`;
  return html`
    <${StatusCard} status=${status} />
    ${may(me, "manage_settings")
      ? html`<${Settings} key=${status.configured_endpoint + status.auto_study + status.revision_study} status=${status}
          refresh=${refresh} saved=${saved} setSaved=${setSaved} />`
      : null}
    ${bindings ? html`<${AllBindings} bindings=${bindings} manage=${may(me, "manage_knowledge")} refresh=${refresh} />` : null}
  `;
}
