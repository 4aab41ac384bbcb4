// The bar on every Knowledge section: the project, the knowledge base it reads, Bind (to a base
// picked from what FORAGER holds, never typed), Study, Unbind, Make a knowledge base when unbound,
// and the FORAGER state in a word.
import { html, useState } from "./vendor/preact-htm.module.js";
import * as api from "./api.js";
import { Confirm, Notice, Problem, connectionState, may, scoped, useAction, useConsole, useLoad } from "./ui.js";

/** The knowledge base a project reads ("" = the console default), or "" when unbound. */
export function readsFor(bindings, project) {
  if (!bindings) return "";
  if (!project) return bindings.console_default?.knowledge_base ?? "";
  return bindings.bindings.find((row) => row.project === project)?.knowledge_base ?? "";
}

function BindPicker({ project, reads, act, refresh }) {
  const bases = useLoad(() => api.get("/knowledge/projects"), []);
  // nothing is preselected: Bind acts on the base the person picked, never on the list's first
  const [picked, setPicked] = useState("");
  const choices = (bases.data?.projects ?? []).filter((base) => base.project_ref !== reads);
  const chosen = choices.some((base) => base.project_ref === picked) ? picked : "";
  const bind = (event) => {
    event.preventDefault();
    act.run(
      async () => {
        await api.post("/knowledge/project-map", { project, knowledge_base: chosen });
        refresh();
      },
      `${project || "The console default"} now reads ${chosen}.`,
    );
  };
  if (bases.error) return html`<${Problem} error=${bases.error} />`;
  return html`<form class="bind" onSubmit=${bind}>
    <label>Knowledge base to bind
      <select value=${chosen} onChange=${(event) => setPicked(event.currentTarget.value)} disabled=${!bases.data}>
        ${bases.data === null ? html`<option value="">Reading FORAGER's list…</option>` : html`<option value="">Choose a knowledge base</option>`}
        ${choices.map((base) => html`<option value=${base.project_ref}>${base.name} (${base.project_ref})</option>`)}
      </select>
    </label>
    <button type="submit" disabled=${act.busy || !chosen}>Bind</button>
  </form>`;
}

function MakeBase({ project, act, refresh }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const make = (event) => {
    event.preventDefault();
    act.run(
      async () => {
        const made = await api.post("/knowledge/bases", { name, description, project });
        setName("");
        setDescription("");
        refresh();
        return made;
      },
      (made) => `Made ${made.knowledge_base.name} (${made.knowledge_base.project_ref}); ${project || "the console default"} reads it.`,
    );
  };
  return html`<form class="make" onSubmit=${make} aria-label="Make a knowledge base">
    <label>Name<input required maxlength="200" value=${name} onInput=${(event) => setName(event.currentTarget.value)} /></label>
    <label>What it is for<input maxlength="2000" value=${description} onInput=${(event) => setDescription(event.currentTarget.value)} /></label>
    <button type="submit" disabled=${act.busy}>Make a knowledge base</button>
  </form>`;
}

export function Bar() {
  const { me, project, setProject, seen, status, bindings, bindingsError, refresh } = useConsole();
  const act = useAction();
  const reads = readsFor(bindings, project);
  const state = connectionState(status);
  const consoleDefault = me.organizations.includes(me.installation_organization);
  const manage = may(me, "manage_knowledge");
  const study = () =>
    act.run(() => api.post("/knowledge/seed", {}, scoped(project)), (answer) => answer.message);
  const unbind = () =>
    act.run(
      async () => {
        await api.post("/knowledge/project-map", { project, knowledge_base: "" });
        refresh();
      },
      `${project || "The console default"} reads no knowledge base now.`,
    );
  return html`<div class="bar" role="region" aria-label="Project and knowledge base">
    <label>Project
      <select value=${project} onChange=${(event) => setProject(event.currentTarget.value)}>
        ${me.projects.map((row) => html`<option value=${row.project}>${row.project} (${row.role ?? "owner of its organization"})</option>`)}
        ${consoleDefault ? html`<option value="">Console default</option>` : null}
        ${seen ? null : html`<option value=${project} disabled>${project || "Console default"} (not found)</option>`}
      </select>
    </label>
    <p class="reads">
      ${bindingsError ? html`<span class="error">${bindingsError.message}</span>` : bindings === null ? "Reading the bindings…" : reads ? html`Reads knowledge base <code>${reads}</code>` : "Reads no knowledge base"}
      <br /><span class=${"state state-" + state.key}>FORAGER ${state.word}</span>
    </p>
    ${manage && seen && bindings !== null
      ? html`<div class="actions"><${BindPicker} key=${project + reads} project=${project} reads=${reads} act=${act} refresh=${refresh} />
          ${reads
            ? html`<div class="row">
                ${project ? html`<button type="button" disabled=${act.busy} onClick=${study}>Study</button>` : null}
                <${Confirm} text="Unbind" disabled=${act.busy} onConfirm=${unbind} yes=${"Unbind " + (project || "the console default")}
                  question=${`${project || "The console default"} will read no knowledge base: its sections show nothing from ${reads} until it is bound again. Nothing in FORAGER is deleted.`} />
              </div>`
            : html`<${MakeBase} project=${project} act=${act} refresh=${refresh} />`}</div>`
      : null}
    <div class="outcome">
      <${Problem} error=${act.error} />
      ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    </div>
  </div>`;
}
