// Knowledge changes: findings (what changed in the knowledge base since the colony studied it)
// with Queue and Dismiss, newest first, a page at a time; Scan and Seed for the project in the bar
// (never the console default).
import { html, useEffect, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Id, Loaded, Notice, Path, Problem, When, scoped, useAction, useAddressed, useConsole, useLoad } from "../ui.js";

export default function KnowledgeChanges() {
  const { project, refresh } = useConsole();
  const [status, setStatus] = useAddressed("status", "open");
  const [cursors, setCursors] = useState([null]);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => setCursors([null]), [project]); // another project: its newest findings
  const findings = useLoad(
    () => api.get("/knowledge/changes", { ...scoped(project), status, ...(cursor ? { cursor } : {}) }),
    [project, status, cursor],
  );
  const act = useAction();
  const run = (path, notice) =>
    act.run(async () => {
      const answer = await api.post(path, {}, scoped(project));
      findings.reload();
      refresh();
      return answer;
    }, notice);
  return html`
    <div class="row">
      ${project
        ? html`<button type="button" disabled=${act.busy}
              onClick=${() => run("/knowledge/changes/scan", (a) => `Scanned ${a.sources} sources: ${a.new_findings} new findings.`)}>Scan</button>
            <button type="button" disabled=${act.busy} onClick=${() => run("/knowledge/seed", (a) => a.message)}>Seed</button>`
        : html`<p class="muted">Scan and Seed run for a project: pick one in the bar.</p>`}
      <label>Show<select value=${status} onChange=${(event) => { setStatus(event.currentTarget.value); setCursors([null]); }}>
        <option value="open">open findings</option><option value="all">every finding</option></select></label>
    </div>
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${findings} what="the findings">
      ${(answer) => html`
        ${answer.findings.length === 0
          ? html`<p>No ${status === "open" ? "open " : ""}findings${cursors.length > 1 ? " after these" : ""}.</p>`
          : html`<table>
              <thead><tr><th scope="col">Source</th><th scope="col">What changed</th><th scope="col">Detected</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
              <tbody>
                ${answer.findings.map(
                  (finding) => html`<tr key=${finding.id}>
                    <td data-label="Source"><${Path} text=${finding.source_name} /></td>
                    <td data-label="What changed">${finding.kind}</td>
                    <td data-label="Detected"><${When} iso=${finding.detected_at} /></td>
                    <td data-label="Status">${finding.status}${finding.mission_id ? html` · mission <${Id} value=${finding.mission_id} label=${"the mission of " + finding.source_name} />` : null}</td>
                    <td>${finding.status === "open"
                      ? html`<div class="row">
                          <button type="button" aria-label=${"Queue " + finding.source_name} disabled=${act.busy}
                            onClick=${() => run(`/knowledge/changes/${encodeURIComponent(finding.id)}/queue`, `Queued ${finding.source_name}.`)}>Queue</button>
                          <button type="button" aria-label=${"Dismiss " + finding.source_name} disabled=${act.busy}
                            onClick=${() => run(`/knowledge/changes/${encodeURIComponent(finding.id)}/dismiss`, `Dismissed ${finding.source_name}.`)}>Dismiss</button>
                        </div>`
                      : null}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`}
        ${cursors.length > 1 || answer.next_cursor
          ? html`<div class="row">
              <p class="muted" role="status">Newest first; page ${cursors.length}.</p>
              <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors([null])}>Newest findings</button>
              <button type="button" disabled=${!answer.next_cursor} onClick=${() => setCursors([...cursors, answer.next_cursor])}>Older findings</button>
            </div>`
          : null}`}
    <//>
  `;
}
