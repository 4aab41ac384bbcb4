// Sources and Ingestion: the registered sources, jobs with their eleven stages and FORAGER's own
// progress (read again by itself while a job runs), Cancel, Retry, Import by path (what the
// engine may read said before anyone presses Import), and upload with preflight's count first.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Bytes, Id, Loaded, Notice, Path, Problem, Table, When, scoped, useAction, useAddress, useConsole, useLoad } from "../ui.js";
import * as route from "../route.js";

const POLL_MS = 2000;
const SHOWN_INPUTS = 3;

/** A job as people name it: its kind and what it was given ("Upload: notes.md, plan.pdf and 4
 * more"); a job queued past the edge (FORAGER's own, the demo's) has only its id. */
export function jobName(job) {
  if (!job.kind) return `Job ${job.job_id}`;
  const kind = job.kind === "upload" ? "Upload" : "Import";
  const shown = job.inputs.slice(0, SHOWN_INPUTS);
  const more = Math.max(job.input_count, job.inputs.length) - shown.length;
  return `${kind}: ${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

const STAGE = (name) => name.replaceAll("_", " ");

function Job({ job, act, done }) {
  const { project } = useConsole();
  const name = jobName(job);
  const post = (verb) =>
    act.run(async () => {
      const answer = await api.post(`/knowledge/jobs/${encodeURIComponent(job.job_id)}/${verb}`, {}, scoped(project));
      done();
      return answer;
    }, `${verb === "cancel" ? "Cancel asked for" : "Retrying"} ${name}.`);
  return html`<li class="card job" aria-label=${name}>
    <h4 class="job-name" title=${job.inputs?.length ? job.inputs.join("\n") : null}>${job.kind ? name : html`Job <${Id} value=${job.job_id} label="this job's id" />`}</h4>
    <p><strong>${job.status}</strong>${job.current_stage ? ` · ${STAGE(job.current_stage)}` : ""} · <${When} iso=${job.created_at} />${job.queued_by ? ` · by ${job.queued_by}` : ""}${job.kind ? html` · <${Id} value=${job.job_id} label=${"the id of " + name} />` : null}</p>
    <progress max="1" value=${job.progress} aria-label=${"Progress of " + name}>${Math.round(job.progress * 100)}%</progress>
    ${job.error ? html`<p class="error">${job.error.stage ? job.error.stage + ": " : ""}${job.error.message}</p>` : null}
    <details><summary>The eleven stages</summary>
      <table><thead><tr><th scope="col">Stage</th><th scope="col">Status</th><th scope="col">Processed</th><th scope="col">Skipped</th><th scope="col">Failed</th></tr></thead>
        <tbody>${job.stages.map((stage) => html`<tr key=${stage.name}><td data-label="Stage">${stage.name}</td><td data-label="Status">${stage.status}</td>
          <td data-label="Processed">${stage.processed}</td><td data-label="Skipped">${stage.skipped}</td><td data-label="Failed">${stage.failed}</td></tr>`)}</tbody></table>
    </details>
    <div class="row">
      ${!job.terminal ? html`<button type="button" disabled=${act.busy || job.cancel_requested} onClick=${() => post("cancel")}>Cancel</button>` : null}
      ${job.status === "failed" || job.status === "cancelled" ? html`<button type="button" disabled=${act.busy} onClick=${() => post("retry")}>Retry</button>` : null}
    </div>
  </li>`;
}

function Jobs({ tick }) {
  const { project } = useConsole();
  const jobs = useLoad(() => api.get("/knowledge/jobs", { ...scoped(project), limit: 10 }), [project, tick]);
  const act = useAction();
  const running = (jobs.data?.jobs ?? []).some((job) => !job.terminal);
  useEffect(() => {
    if (!running) return undefined;
    const timer = setTimeout(jobs.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [running, jobs.data]);
  return html`<section class="card" aria-labelledby="jobs-title">
    <h3 id="jobs-title">Ingestion</h3>
    ${running ? html`<p class="muted" role="status">A job is running: this list reads itself again every ${POLL_MS / 1000} s.</p>` : null}
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
    ${jobs.data || jobs.error
      ? html`<${Loaded} load=${jobs} what="the jobs">
          ${(answer) =>
            answer.jobs.length === 0
              ? html`<p>No jobs yet.</p>`
              : html`<ul class="plain">${answer.jobs.map((job) => html`<${Job} key=${job.job_id} job=${job} act=${act} done=${jobs.reload} />`)}</ul>`}
        <//>`
      : html`<p class="muted" role="status">Reading the jobs…</p>`}
  </section>`;
}

function ImportByPath({ started }) {
  const { project, status } = useConsole();
  const [paths, setPaths] = useState("");
  const act = useAction();
  const roots = status?.input_roots;
  const submit = (event) => {
    event.preventDefault();
    const list = paths.split("\n").map((line) => line.trim()).filter(Boolean);
    act.run(async () => {
      const job = await api.post("/knowledge/jobs", { paths: list }, scoped(project));
      setPaths("");
      started();
      return job;
    }, (job) => `Queued: ${jobName(job)}.`);
  };
  return html`<section class="card" aria-labelledby="import-title">
    <h3 id="import-title">Import by path</h3>
    ${roots
      ? html`<p>The engine may read inside <code>${roots.workspace || "its own roots"}</code>${roots.next?.roots?.length ? html`: ${roots.next.roots.map((root) => html`<code>${root}</code> `)}` : ""}
          ${roots.refused?.length ? html`<br />Not handed over: ${roots.refused.map((r) => html`<code>${r.folder}</code> (${r.reason}) `)}` : null}
          ${roots.waiting ? html`<br />A saved change waits for the engine's next start.` : null}</p>`
      : null}
    <form onSubmit=${submit}>
      <label>Workspace paths, one a line<textarea required rows="3" value=${paths} onInput=${(event) => setPaths(event.currentTarget.value)}></textarea></label>
      <button type="submit" class="primary" disabled=${act.busy}>Import</button>
    </form>
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
  </section>`;
}

// The inline upload's whole body is at most 4 MB (docs/api.md, "Uploads"); a larger batch goes
// through an upload session: each file PUT straight to its presigned URL, then measured and
// committed by the session's id.
const INLINE_MAX_BYTES = 3_500_000;

async function stage(project, files, progress) {
  const session = await api.post(
    "/knowledge/upload/sessions",
    { files: files.map((file) => ({ name: file.name, size_bytes: file.size })) },
    scoped(project),
  );
  for (const [index, part] of session.parts.entries()) {
    progress(`Sending ${index + 1} of ${session.parts.length}: ${part.name}`);
    const file = files.find((candidate) => candidate.name === part.name) ?? files[index];
    let answer;
    try {
      // Content-Length is the browser's to write (it is signed: the file's own size)
      answer = await fetch(part.url, { method: part.method, body: file, credentials: "omit" });
    } catch (error) {
      throw new api.ApiError(0, `The upload of ${part.name} could not reach storage (${error.message}).`, "network");
    }
    if (!answer.ok) throw new api.ApiError(answer.status, `Storage refused ${part.name} (${answer.status}).`, "staging");
  }
  progress(null);
  return session.session_id;
}

function Upload({ started }) {
  const { project } = useConsole();
  const [files, setFiles] = useState([]);
  const [admission, setAdmission] = useState(null);
  const [session, setSession] = useState(null);
  const [sending, setSending] = useState(null);
  const act = useAction();
  const large = files.reduce((total, file) => total + file.size, 0) > INLINE_MAX_BYTES;
  const form = (extra = {}) => {
    const body = new FormData();
    for (const file of files) body.append("files", file, file.name);
    for (const [key, value] of Object.entries(extra)) body.append(key, value);
    return body;
  };
  const preflight = () =>
    act.run(async () => {
      let answer;
      if (large) {
        const staged = session ?? (await stage(project, files, setSending));
        setSession(staged);
        answer = await api.post("/knowledge/preflight", { session_id: staged }, scoped(project));
      } else {
        answer = await api.request("POST", "/knowledge/preflight", { body: form(), query: scoped(project) });
      }
      setAdmission(answer);
      return answer;
    });
  const upload = () =>
    act.run(async () => {
      const admitted = admission?.admission_job_id ? { admission_job_id: admission.admission_job_id } : {};
      const job = session
        ? await api.post("/knowledge/upload", { session_id: session, ...admitted }, scoped(project))
        : await api.request("POST", "/knowledge/upload", { body: form(admitted), query: scoped(project) });
      setAdmission(null);
      setSession(null);
      setFiles([]);
      started();
      return job;
    }, (job) => `Queued: ${jobName(job)}.`);
  return html`<section class="card" aria-labelledby="upload-title">
    <h3 id="upload-title">Upload</h3>
    <div class="row">
      <label>Files<input type="file" multiple onChange=${(event) => { setFiles([...event.currentTarget.files]); setAdmission(null); setSession(null); }} /></label>
      <button type="button" disabled=${act.busy || files.length === 0} onClick=${preflight}>Check with FORAGER</button>
      <button type="button" class="primary" disabled=${act.busy || !admission?.admitted} onClick=${upload}>Upload</button>
    </div>
    ${files.length && !admission ? html`<p class="muted">${files.length} files picked${large ? ", sent through an upload session (over the inline 4 MB)" : ""}; FORAGER's count decides.</p>` : null}
    ${sending ? html`<p role="status">${sending}</p>` : null}
    ${admission
      ? html`<p role="status">${admission.admitted ? "Admitted" : "Refused"}: ${admission.admitted_count} of ${admission.entry_count} entries, ${admission.measured} of ${admission.limit}.
          ${admission.message ?? ""}</p>`
      : null}
    <${Problem} error=${act.error} />
    ${act.notice ? html`<${Notice} text=${act.notice} />` : null}
  </section>`;
}

// One source as FORAGER read it: why it failed, the text it extracted, and the chunks it cut. It is
// an address (`#/sources?project=…&source=src_…`): a reload reopens it, Back closes it, a link
// shares it; it opens at the top of the section, its name focused.
function Source({ id, close }) {
  const { project } = useConsole();
  const page = useLoad(() => api.get(`/knowledge/sources/${encodeURIComponent(id)}`, scoped(project)), [project, id]);
  const panel = useRef(null);
  useEffect(() => {
    panel.current?.scrollIntoView({ block: "start" });
    panel.current?.focus({ preventScroll: true });
  }, [id]);
  return html`<section class="card" aria-labelledby="source-title" tabindex="-1" ref=${panel}>
    <${Loaded} load=${page} what="the source">
      ${(found) => html`<h3 id="source-title"><${Path} text=${found.source.name} /></h3>
        <dl class="facts">
          <dt>Status</dt><dd>${found.ingestion_status ?? found.source.processing_status}</dd>
          <dt>Read as</dt><dd>${found.parser ?? "—"}${found.mime_type ? ` (${found.mime_type})` : ""}</dd>
          <dt>Text</dt><dd>${found.char_count} characters · ${found.chunk_total ?? found.chunks.length} chunks · ${found.knowledge_count} statements</dd>
        </dl>
        ${found.error ? html`<p class="error">Could not be read (${found.error.stage ?? "ingestion"}): ${found.error.message}</p>` : null}
        ${found.source.duplicate_of ? html`<p>A byte-for-byte copy of another source: it adds nothing of its own.</p>` : null}
        <details><summary>Extracted text</summary><pre class="extracted" tabindex="0" aria-label="Extracted text">${found.text ?? ""}</pre></details>
        <h4>Chunks</h4>
        ${found.chunks.length === 0
          ? html`<p>No chunks.</p>`
          : html`<ol class="chunks">${found.chunks.map(
              (chunk) => html`<li key=${chunk.chunk_id}><p><strong>${chunk.heading || "(before the first heading)"}</strong> · ${chunk.location ?? ""} · ~${chunk.token_estimate ?? "?"} tokens</p>
                <p class="chunk-text">${chunk.text}</p></li>`,
            )}</ol>`}`}
    <//>
    <button type="button" onClick=${close}>Close the source</button>
  </section>`;
}

const SOURCE_COLUMNS = (open) => [
  {
    key: "name",
    label: "Name",
    cell: (source) => html`<button type="button" class="source-open" aria-label=${"Open " + source.name} onClick=${() => open(source.source_id)}><${Path} text=${source.name} /></button>`,
  },
  { key: "type", label: "Type" },
  { key: "size_bytes", label: "Size", value: (source) => Number(source.size_bytes ?? 0), cell: (source) => html`<${Bytes} count=${source.size_bytes} />` },
  {
    key: "processing_status",
    label: "Status",
    value: (source) => `${source.processing_status ?? ""} ${source.error?.message ?? ""}`,
    cell: (source) => html`${source.processing_status}${source.error ? html`<br /><span class="error">${source.error.message}</span>` : null}`,
  },
  { key: "created_at", label: "Added", value: (source) => source.created_at ?? "", cell: (source) => html`<${When} iso=${source.created_at} />` },
];

export default function Sources() {
  const { project } = useConsole();
  const address = useAddress();
  const [tick, setTick] = useState(0);
  const sources = useLoad(() => api.get("/knowledge/sources", scoped(project)), [project, tick]);
  const started = () => setTick((n) => n + 1);
  const open = address.source ?? null;
  const setOpen = (id) => route.go("sources", { ...address, project: undefined, source: id });
  return html`
    ${open ? html`<${Source} key=${open} id=${open} close=${() => setOpen(null)} />` : null}
    <${ImportByPath} started=${started} />
    <${Upload} started=${started} />
    <${Jobs} tick=${tick} />
    <section class="card" aria-labelledby="sources-title">
      <h3 id="sources-title">Registered sources</h3>
      <${Loaded} load=${sources} what="the sources">
        ${(answer) =>
          answer.sources.length === 0
            ? html`<p>No sources registered yet.</p>`
            : html`<${Table} caption="Registered sources" columns=${SOURCE_COLUMNS(setOpen)} rows=${answer.sources} rowKey=${(source) => source.source_id} />`}
      <//>
    </section>
  `;
}
