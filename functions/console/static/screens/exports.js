// Exports: the history, Make export, Download with the digest shown (it waits while the archive
// is verified in the background); a refused download (mismatch, expired) shown as its sentence.
import { html, useEffect, useState } from "../vendor/preact-htm.module.js";
import { ApiError } from "../api.js";
import * as api from "../api.js";
import { Bytes, Id, Loaded, Notice, Problem, When, scoped, useAction, useConsole, useLoad } from "../ui.js";

/** How long Download keeps asking while the archive is verified (the verifier's own limit). */
const VERIFY_WAIT_MS = 15 * 60 * 1000;

/** Ask for the archive as the console's script (its header): a refusal is read as its sentence; a
 * verified archive is answered with its presigned URL (200 and the envelope; one hand-over, one
 * knowledge_export_downloaded event), and the browser is sent there, which saves it. An answer of
 * 303 (a colony from before the console was answered in JSON) is followed by a navigation. A 409
 * not_ready means it is still being verified in the background: ask again after its Retry-After,
 * for as long as a verification may take. */
async function download(exportId, project) {
  const url = new URL(`/knowledge/exports/${encodeURIComponent(exportId)}/download`, window.location.origin);
  if (project) url.searchParams.set("project", project);
  const started = Date.now();
  for (;;) {
    const response = await fetch(url, {
      credentials: "same-origin",
      redirect: "manual",
      headers: { "X-Knowledge-Console": "1", Accept: "application/json" },
    });
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      window.location.assign(url.toString());
      return;
    }
    const payload = await response.json().catch(() => null);
    if (response.ok && payload?.data?.url) {
      window.location.assign(payload.data.url);
      return;
    }
    if (response.status === 409 && payload?.code === "not_ready" && Date.now() - started < VERIFY_WAIT_MS) {
      const seconds = Number(response.headers.get("Retry-After")) || 5;
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    throw new ApiError(response.status, payload?.message ?? `The download answered ${response.status}.`, payload?.code);
  }
}

/** An export still being made: its row is read again until it is done, as the jobs' list is. */
const SETTLED = new Set(["completed", "failed", "cancelled", "canceled", "expired"]);
const POLL_MS = 2000;

export default function Exports() {
  const { project } = useConsole();
  const history = useLoad(() => api.get("/knowledge/exports", scoped(project)), [project]);
  const act = useAction();
  const running = (history.data?.exports ?? []).some((row) => !SETTLED.has(row.status));
  useEffect(() => {
    if (!running || history.loading) return undefined;
    const again = setTimeout(history.reload, POLL_MS);
    return () => clearTimeout(again);
  }, [running, history.loading, history.data]);
  const [format, setFormat] = useState("jsonl");
  const make = (event) => {
    event.preventDefault();
    act.run(async () => {
      const row = await api.post("/knowledge/exports", { format }, scoped(project));
      history.reload();
      return row;
    }, (row) => `Export ${row.export_id} started (${row.status}).`);
  };
  return html`
    <form onSubmit=${make}>
      <label>Format<select value=${format} onChange=${(event) => setFormat(event.currentTarget.value)}>
        <option value="jsonl">jsonl</option><option value="obsidian">obsidian</option><option value="anthill">anthill</option></select></label>
      <button type="submit" class="primary" disabled=${act.busy}>Make export</button>
      <button type="button" onClick=${history.reload}>Read the history again</button>
    </form>
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    <${Loaded} load=${history} what="the export history">
      ${(answer) =>
        answer.exports.length === 0
          ? html`<p>No exports yet.</p>`
          : html`<table>
              <thead><tr><th scope="col">Export</th><th scope="col">Status</th><th scope="col">Made</th><th scope="col">SHA-256</th><th scope="col">Download</th></tr></thead>
              <tbody>${answer.exports.map(
                (row) => html`<tr key=${row.export_id}>
                  <td data-label="Export">${row.format}${row.size_bytes ? html` · <${Bytes} count=${row.size_bytes} />` : ""} <${Id} value=${row.export_id} label=${"export id"} /></td>
                  <td data-label="Status">${row.status}${row.error ? ` — ${row.error}` : ""}</td>
                  <td data-label="Made"><${When} iso=${row.finished_at ?? row.created_at} /></td>
                  <td data-label="SHA-256">${row.sha256 ? html`<${Id} value=${row.sha256} label=${"SHA-256 of " + row.export_id} />` : "not yet"}</td>
                  <td><button type="button" disabled=${act.busy} aria-label=${"Download " + row.export_id}
                    onClick=${() => act.run(() => download(row.export_id, project), `Downloading ${row.file_name ?? row.export_id}.`)}>Download</button></td>
                </tr>`,
              )}</tbody>
            </table>`}
    <//>
  `;
}
