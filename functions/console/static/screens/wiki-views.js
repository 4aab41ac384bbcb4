// The wiki's views of the whole base: the Directory view, Recent changes, Needs review, Lint,
// Stats and Search pages, each a table or a list a person can read. docs/console.md, The wiki.
import { html, useState } from "../vendor/preact-htm.module.js";
import { Bytes, Loaded, Table, When, useLoad, when } from "../ui.js";
import * as route from "../route.js";
import { TRUST, Tags, Trust, fileName, get, kb, needsReview, rowWho, titleOf, who } from "./wiki-common.js";
import { dirHref, pageHref, parent } from "./wiki-markdown.js";

const PAGE_COLUMNS = [
  {
    key: "page",
    label: "Page",
    value: (row) => (row.type === "dir" ? fileName(row.path) + "/" : titleOf(row)),
    cell: (row) =>
      row.type === "dir"
        ? html`<a href=${dirHref(row.path)}>${fileName(row.path)}/</a> <span class="muted">${row.children} ${row.children === 1 ? "entry" : "entries"}</span>`
        : html`<a href=${pageHref(row.path)}>${titleOf(row)}</a>`,
  },
  { key: "path", label: "File", value: (row) => row.path, cell: (row) => html`<span class="path">${row.path}</span>` },
  { key: "page_type", label: "Type" },
  { key: "status", label: "Status" },
  { key: "tags", label: "Tags", value: (row) => (row.tags ?? []).join(" "), cell: (row) => (row.type === "dir" ? null : html`<${Tags} tags=${row.tags} />`) },
  { key: "trust", label: "Trust", value: (row) => TRUST[row.trust] ?? "", cell: (row) => (row.type === "dir" ? null : html`<${Trust} row=${row} />`) },
  {
    key: "last_write_at",
    label: "Last write",
    value: (row) => row.last_write_at ?? "",
    cell: (row) => (row.type === "dir" ? null : html`${rowWho(row)} <${When} iso=${row.last_write_at} />`),
  },
];

function PageTable({ rows, caption }) {
  if (rows.length === 0) return html`<p class="muted">None.</p>`;
  return html`<${Table} caption=${caption} columns=${PAGE_COLUMNS} rows=${rows} rowKey=${(row) => row.path} />`;
}


/** Where a page or directory sits: each directory from the base's root a link, itself the last. */
export function Crumbs({ path, known, last }) {
  const parts = path.split("/").slice(2); // past "/fs"
  const steps = parts.map((part, index) => "/fs/" + parts.slice(0, index + 1).join("/"));
  return html`<nav class="crumbs" aria-label="Breadcrumbs"><ol>
    <li><a href=${dirHref("/fs")}>Pages</a></li>
    ${steps.map((step, index) =>
      index === steps.length - 1
        ? html`<li key=${step} aria-current="page">${last ?? parts[index]}</li>`
        : html`<li key=${step}><a href=${dirHref(step)}>${known?.get(step)?.title || parts[index]}</a></li>`,
    )}
  </ol></nav>`;
}

/** Recent changes across the base: the pages last written, newest first (the listing's last write). */
export function RecentChanges({ rows }) {
  const recent = rows
    .filter((row) => row.type !== "dir" && row.last_write_at)
    .sort((a, b) => (a.last_write_at < b.last_write_at ? 1 : -1))
    .slice(0, 100);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Recent changes</h3>
    <p>The ${recent.length} pages written last, newest first.</p>
    ${recent.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<${Table} caption="Recent changes, newest first" rows=${recent} rowKey=${(row) => row.path} columns=${[
          { key: "when", label: "When", value: (row) => row.last_write_at, cell: (row) => html`<${When} iso=${row.last_write_at} />` },
          PAGE_COLUMNS[0],
          { key: "who", label: "Who", value: rowWho },
          { key: "dir", label: "Directory", value: (row) => parent(row.path), cell: (row) => html`<a href=${dirHref(parent(row.path))}><span class="path">${parent(row.path)}/</span></a>` },
        ]} />`}
  </section>`;
}

export function DirectoryView({ dir, rows }) {
  const inside = rows.filter((row) => parent(row.path) === dir && row.path !== dir);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Directory view</h3>
    <${Crumbs} path=${dir} />
    <${PageTable} rows=${inside} caption=${"What " + dir + " holds"} />
  </section>`;
}

export function NeedsReview({ rows }) {
  const waiting = rows.filter(needsReview);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Needs review</h3>
    <p>Pages whose derived trust asks for a person's review: ${waiting.length}.</p>
    <${PageTable} rows=${waiting} caption="Pages that need a review" />
  </section>`;
}

const LINT_COLUMNS = [
  { key: "code", label: "Finding", value: (row) => row.code, cell: (row) => kindName(row.code) },
  { key: "path", label: "Page", cell: (row) => html`<a href=${pageHref(row.path)}><span class="path">${row.path}</span></a>` },
  { key: "line", label: "Line", value: (row) => row.line ?? "" },
  { key: "message", label: "What" },
];

/** Findings every page imported from a folder of plain Markdown has, by design: no front matter,
 * no entry in /fs/index.md. Set aside (counted, one click away), so the findings that need a
 * person are what Lint shows first. */
const BY_DESIGN = new Set(["missing_frontmatter", "missing_index_entry"]);
const kindName = (code) => code.replaceAll("_", " ");

export function Lint({ project }) {
  const [fresh, setFresh] = useState(0);
  const [every, setEvery] = useState(false);
  const lint = useLoad(() => get(`${kb(project)}/lint`, fresh ? { fresh: 1 } : {}), [project, fresh]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Lint</h3>
    <button type="button" onClick=${() => setFresh((n) => n + 1)}>Check again</button>
    <${Loaded} load=${lint} what="the lint findings">${(data) => {
      const counts = new Map();
      for (const finding of data.findings) counts.set(finding.code, (counts.get(finding.code) ?? 0) + 1);
      const aside = data.findings.filter((finding) => BY_DESIGN.has(finding.code));
      const shown = every ? data.findings : data.findings.filter((finding) => !BY_DESIGN.has(finding.code));
      return html`
        <p>${data.findings.length} ${data.findings.length === 1 ? "finding" : "findings"}, checked ${when(data.checked_at)}.</p>
        ${counts.size > 1
          ? html`<ul class="lint-kinds" aria-label="Findings by kind">${[...counts].sort((a, b) => b[1] - a[1]).map(
              ([code, count]) => html`<li key=${code}>${kindName(code)}: ${count}</li>`,
            )}</ul>`
          : null}
        ${aside.length
          ? html`<p class="muted">${every ? "Shown too: " : "Set aside: "}${aside.length} ${aside.length === 1 ? "finding says" : "findings say"} only that a page has no front matter
              or no entry in /fs/index.md. Pages imported from a folder of plain Markdown have neither, by design.${" "}
              <button type="button" class="link" aria-pressed=${every} onClick=${() => setEvery(!every)}>${every ? "Set them aside" : "Show them too"}</button></p>`
          : null}
        ${shown.length === 0
          ? html`<p class="muted">${data.findings.length ? "Nothing else to fix." : "Nothing to fix."}</p>`
          : html`<${Table} caption="Lint findings" rows=${shown} columns=${LINT_COLUMNS} />`}`;
    }}<//>
  </section>`;
}

export function Stats({ project }) {
  const stats = useLoad(() => get(`${kb(project)}/stats`), [project]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Stats</h3>
    <${Loaded} load=${stats} what="the base's figures">${(data) => html`<dl class="facts">
      <dt>Pages</dt><dd>${data.pages}</dd>
      <dt>Size</dt><dd><${Bytes} count=${data.bytes} /></dd>
      <dt>Unverified</dt><dd>${data.unverified}</dd>
      <dt>Stale</dt><dd>${data.stale}</dd>
      <dt>Needs review</dt><dd>${data.needs_review.total} (unverified ${data.needs_review.unverified}, confirmed by a machine ${data.needs_review.machine_confirmed}, edited since review ${data.needs_review.edited_since_review})</dd>
      <dt>Last change</dt><dd>${data.last_change_at ? who(data.last_change_principal, data.last_change_by) : ""} <${When} iso=${data.last_change_at} /></dd>
    </dl>`}<//>
  </section>`;
}

/** A snippet's text as it reads, not as it is written: markdown's marks dropped, a link its words. */
const plain = (text) =>
  text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, "")
    .replace(/(\*\*|__|\*|`)/g, "");

function Snippet({ fragments }) {
  return html`<p class="snippet">${(fragments ?? []).map((fragment, index) =>
    fragment.hit ? html`<mark key=${index}>${plain(fragment.text)}</mark>` : plain(fragment.text),
  )}</p>`;
}

const SEARCH_FIELDS = ["q", "type", "status", "tag"];

/** The words and filters, as the address says them (a new form for each address, so Back and
 * Forward show their own words and nothing overwrites what is being typed). */
function SearchForm({ query, onSearch }) {
  const [form, setForm] = useState(() => Object.fromEntries(SEARCH_FIELDS.map((name) => [name, query[name] ?? ""])));
  const submit = (event) => {
    event.preventDefault();
    onSearch(Object.fromEntries(Object.entries(form).filter(([, value]) => value.trim()).map(([name, value]) => [name, value.trim()])));
  };
  const field = (name, label) =>
    html`<label>${label}<input name=${name} value=${form[name]} onInput=${(event) => setForm({ ...form, [name]: event.currentTarget.value })} /></label>`;
  return html`<form onSubmit=${submit} role="search" aria-label="Search pages">
    <label>Words<input name="q" required value=${form.q} onInput=${(event) => setForm({ ...form, q: event.currentTarget.value })} /></label>
    ${field("type", "Type")}${field("status", "Status")}${field("tag", "Tag")}
    <button type="submit" class="primary">Search pages</button>
  </form>`;
}

/** Search pages: the words, the filters and the offset live in the address, so Back from a hit
 * returns to these results and a link shares them. */
export function SearchPages({ project, query }) {
  const asked = query.q ? Object.fromEntries(SEARCH_FIELDS.filter((key) => query[key]).map((key) => [key, query[key]])) : null;
  const offset = Number(query.offset) || 0;
  const key = JSON.stringify([asked, offset]);
  const found = useLoad(
    () => (asked ? get(`${kb(project)}/search`, { ...asked, offset }) : Promise.resolve({ none: true })),
    [project, key],
  );
  const show = (words, at) => {
    const next = route.href("wiki", { view: "search", ...words, offset: at || null });
    if (window.location.hash === next) found.reload();
    else window.location.hash = next;
  };
  const setOffset = (at) => show(asked, at);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Search pages</h3>
    <${SearchForm} key=${key} query=${query} onSearch=${(words) => show(words, 0)} />
    <${Loaded} load=${found} what="the pages that match">${(data) =>
      data.none
        ? html`<p class="muted">Every word must match: path, title, tags, type, status or body.</p>`
        : html`<p role="status">${data.total} ${data.total === 1 ? "page matches" : "pages match"}.</p>
          <ol class="hits" aria-label="Pages that match">${data.hits.map((hit) => html`<li key=${hit.path}>
            <a href=${pageHref(hit.path)}>${hit.title || fileName(hit.path)}</a> <span class="muted">${hit.path}${hit.type ? " · " + hit.type : ""}${hit.status ? " · " + hit.status : ""}</span>
            <${Snippet} fragments=${hit.snippet} />
          </li>`)}</ol>
          <div class="row">
            ${offset > 0 ? html`<button type="button" onClick=${() => setOffset(Math.max(0, offset - data.limit))}>Previous results</button>` : null}
            ${data.next_offset != null ? html`<button type="button" onClick=${() => setOffset(data.next_offset)}>More results</button>` : null}
          </div>`}<//>
  </section>`;
}

