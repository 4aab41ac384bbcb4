// The wiki (issue 29): the bar's project's knowledge base read, edited, reviewed and searched over
// the pages API (/api/v1/projects/{id}/kb/*). Loaded only when the Wiki section opens, with its
// vendored markdown-it and diff. docs/console.md, The wiki.
import { html, useEffect, useMemo, useRef, useState } from "../vendor/preact-htm.module.js";
import { diffWordsWithSpace, structuredPatch } from "../vendor/diff.module.js";
import * as api from "../api.js";
import { Bytes, Id, Loaded, Notice, Problem, Table, When, bytes, useAction, useAddress, useConsole, useLoad, when } from "../ui.js";
import * as route from "../route.js";
import { useGrammars } from "./wiki-highlight.js";
import { body, dirHref, pageHref, pageTitle, parent, renderPage } from "./wiki-markdown.js";

const TRUST = {
  unverified: "Unverified",
  human_reviewed: "Reviewed by a person",
  machine_confirmed: "Confirmed by a machine",
  edited_since_review: "Edited since its review",
};
const NEW_PAGE = "---\ntype: Note\ntitle: \nstatus: draft\ntags: []\n---\n# \n";

/**
 * The pages API: its 401 means "not this project's admin" as often as "signed out", so a 401 does
 * not end the session here; /knowledge/me then decides (and signs out when the session is gone).
 */
async function call(method, path, options = {}) {
  try {
    return await api.request(method, path, { ...options, keepSession: true });
  } catch (error) {
    if (error.status === 401) await api.get("/knowledge/me"); // rejects, and signs out, if the session ended
    throw error;
  }
}
const get = (path, query) => call("GET", path, { query });
const post = (path, body = {}) => call("POST", path, { body });

const kb = (project) => `/api/v1/projects/${encodeURIComponent(project)}/kb`;
const pageUrl = (project, path) =>
  `${kb(project)}/pages/${path.replace(/^\/fs\//, "").split("/").map(encodeURIComponent).join("/")}`;
const short = (version) => (version ? version.replace(/^sha256:/, "").slice(0, 10) : "none");
/** A version as people name it: when, who, and what the write said. */
const versionName = (v) => `${when(v.at)} · ${v.actor}${v.summary ? " · " + v.summary : ` · ${v.op}`}${v.current ? " (current)" : ""}`;
const needsReview = (row) => row.type === "file" && row.trust && row.trust !== "human_reviewed";

const go = (params) => route.go("wiki", params);

/** Every row of the base (meta=1), paged past the 500-entry cap with `after`. */
async function listAll(project) {
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

function Tags({ tags }) {
  if (!tags || tags.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="tags">${tags.map((tag) => html`<li key=${tag}>${tag}</li>`)}</ul>`;
}

function Trust({ row }) {
  if (!row?.trust) return html`<span class="muted">unknown</span>`;
  return html`<span class=${"trust trust-" + row.trust}>${TRUST[row.trust] ?? row.trust}</span>`;
}

/** A tree of at most this many entries opens whole; a bigger one opens only where the person is. */
const SMALL_TREE = 40;

/** The directories the person opened or closed in this project's tree, kept in this browser
 * (localStorage: only directory paths, nothing of a page's content). */
function useRemembered(project) {
  const key = `knowledge-console.tree.${project}`;
  const read = () => {
    try {
      return JSON.parse(window.localStorage.getItem(key) ?? "{}") ?? {};
    } catch {
      return {};
    }
  };
  const [chosen, setChosen] = useState(read);
  useEffect(() => setChosen(read()), [key]);
  const choose = (path, open) => {
    const next = { ...chosen, [path]: open };
    setChosen(next);
    try {
      window.localStorage.setItem(key, JSON.stringify(next));
    } catch {
      // storage refused (a private window): the choice lasts this visit
    }
  };
  return [chosen, choose];
}

function Tree({ project, rows, current }) {
  const [chosen, choose] = useRemembered(project);
  const [filter, setFilter] = useState("");
  const byParent = new Map();
  for (const row of rows) {
    const key = parent(row.path);
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(row);
  }
  const small = rows.length <= SMALL_TREE;
  const around = (dir) => Boolean(current) && (current === dir || current.startsWith(dir + "/"));
  const isOpen = (dir) => (dir in chosen ? chosen[dir] : small) || around(dir);
  const link = (row) =>
    html`<a href=${pageHref(row.path)} aria-current=${current === row.path ? "page" : null} title=${row.path}>${titleOf(row)}</a>`;
  // The ARIA tree pattern (navigation treeview): one Tab stop (the item last moved to, else the
  // page shown, else the first); Up and Down move, Right opens a directory or enters it, Left
  // closes it or goes to its parent, Home and End, Enter follows the link.
  const visible = [];
  const walk = (dir) => {
    for (const row of byParent.get(dir) ?? []) {
      visible.push(row);
      if (row.type === "dir" && isOpen(row.path)) walk(row.path);
    }
  };
  walk("/fs");
  const [active, setActive] = useState(null);
  const stop = visible.some((row) => row.path === active) ? active : visible.some((row) => row.path === current) ? current : visible[0]?.path;
  const moveTo = (path) => {
    setActive(path);
    const find = () => treeRef.current?.querySelector(`[data-path="${CSS.escape(path)}"]`);
    const item = find();
    if (item) item.focus(); // at once: the next key press starts from here
    else requestAnimationFrame(() => find()?.focus());
  };
  const treeRef = useRef(null);
  const key = (event) => {
    const at = visible.findIndex((row) => row.path === event.target.dataset?.path);
    if (at < 0) return;
    const row = visible[at];
    const moves = {
      ArrowDown: () => visible[at + 1] && moveTo(visible[at + 1].path),
      ArrowUp: () => at > 0 && moveTo(visible[at - 1].path),
      Home: () => moveTo(visible[0].path),
      End: () => moveTo(visible[visible.length - 1].path),
      ArrowRight: () => {
        if (row.type !== "dir") return;
        if (!isOpen(row.path)) choose(row.path, true);
        else if (visible[at + 1] && parent(visible[at + 1].path) === row.path) moveTo(visible[at + 1].path);
      },
      ArrowLeft: () => {
        if (row.type === "dir" && isOpen(row.path) && !around(row.path)) choose(row.path, false);
        else if (parent(row.path) !== "/fs") moveTo(parent(row.path));
      },
    };
    if (moves[event.key]) {
      event.preventDefault();
      moves[event.key]();
    }
  };
  const level = (dir, depth) =>
    html`<ul role=${depth === 1 ? "tree" : "group"} aria-label=${depth === 1 ? "Pages and directories" : null}
      ref=${depth === 1 ? treeRef : null} onKeyDown=${depth === 1 ? key : null}>${(byParent.get(dir) ?? []).map((row, index, all) => {
      const name = fileName(row.path);
      const common = {
        "data-path": row.path,
        role: "treeitem",
        "aria-level": depth,
        "aria-setsize": all.length,
        "aria-posinset": index + 1,
        tabindex: row.path === stop ? "0" : "-1",
        "aria-current": current === row.path ? "page" : null,
        onFocus: () => setActive(row.path),
      };
      if (row.type === "dir") {
        const open = isOpen(row.path);
        return html`<li key=${row.path} class="dir" role="none">
          <span class="twisty" aria-hidden="true" onClick=${() => choose(row.path, !open)}>${open ? "▾" : "▸"}</span>
          <a ...${common} href=${dirHref(row.path)} aria-expanded=${open ? "true" : "false"}>${name}/</a>
          ${open ? level(row.path, depth + 1) : null}</li>`;
      }
      return html`<li key=${row.path} role="none"><a ...${common} href=${pageHref(row.path)} title=${row.path}>${titleOf(row)}</a></li>`;
    })}</ul>`;
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const found = words.length
    ? rows.filter((row) => row.type !== "dir" && words.every((word) => `${titleOf(row)} ${row.path}`.toLowerCase().includes(word)))
    : [];
  return html`<nav class="wiki-tree" aria-label="Page tree">
    <h3><a href=${dirHref("/fs")}>Pages</a></h3>
    ${rows.length > 0
      ? html`<label class="tree-filter">Filter pages<input type="search" value=${filter} onInput=${(event) => setFilter(event.currentTarget.value)} /></label>`
      : null}
    ${rows.length === 0
      ? html`<p class="muted">No page yet.</p>`
      : words.length
        ? html`<p class="muted" role="status">${found.length} ${found.length === 1 ? "page" : "pages"}</p>
            <ul class="found">${found.slice(0, 200).map((row) => html`<li key=${row.path}>${link(row)}</li>`)}</ul>`
        : level("/fs", 1)}
  </nav>`;
}

const fileName = (path) => path.slice(path.lastIndexOf("/") + 1);

/** A page's name for people: its title (frontmatter, else its first heading), else its file name. */
const titleOf = (row) => row?.title || fileName(row?.path ?? "");

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
    cell: (row) => html`${row.last_write_by ?? ""} <${When} iso=${row.last_write_at} />`,
  },
];

function PageTable({ rows, caption }) {
  if (rows.length === 0) return html`<p class="muted">None.</p>`;
  return html`<${Table} caption=${caption} columns=${PAGE_COLUMNS} rows=${rows} rowKey=${(row) => row.path} />`;
}

/** Where a page or directory sits: each directory from the base's root a link, itself the last. */
function Crumbs({ path, known, last }) {
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
function RecentChanges({ rows }) {
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
          { key: "who", label: "Who", value: (row) => row.last_write_by ?? "" },
          { key: "dir", label: "Directory", value: (row) => parent(row.path), cell: (row) => html`<a href=${dirHref(parent(row.path))}><span class="path">${parent(row.path)}/</span></a>` },
        ]} />`}
  </section>`;
}

function DirectoryView({ dir, rows }) {
  const inside = rows.filter((row) => parent(row.path) === dir && row.path !== dir);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Directory view</h3>
    <${Crumbs} path=${dir} />
    <${PageTable} rows=${inside} caption=${"What " + dir + " holds"} />
  </section>`;
}

function NeedsReview({ rows }) {
  const waiting = rows.filter(needsReview);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Needs review</h3>
    <p>Pages whose derived trust asks for a person's review: ${waiting.length}.</p>
    <${PageTable} rows=${waiting} caption="Pages that need a review" />
  </section>`;
}

/** One changed line's words: `removed` and `added` compared word by word; the removed line ("-")
 * shows its own words with those the added line lacks marked, the added line ("+") likewise. */
function wordsOf(removed, added, side) {
  if (removed === null || added === null) return side === "-" ? removed : added;
  return diffWordsWithSpace(removed, added).map((part, index) => {
    if (side === "-" ? part.added : part.removed) return null; // the other line's words
    if (part.added || part.removed) return html`<mark key=${index}>${part.value}</mark>`;
    return part.value;
  });
}

/** One hunk's lines: a run of removed lines beside the run of added lines after it is read pair
 * by pair, each pair's changed words marked. */
function hunkLines(lines) {
  const out = [];
  for (let index = 0; index < lines.length; ) {
    const sign = lines[index][0];
    if (sign === "-") {
      let end = index;
      while (end < lines.length && lines[end][0] === "-") end += 1;
      let after = end;
      while (after < lines.length && lines[after][0] === "+") after += 1;
      const removed = lines.slice(index, end).map((line) => line.slice(1));
      const added = lines.slice(end, after).map((line) => line.slice(1));
      removed.forEach((line, n) => out.push(html`<del>- ${n < added.length ? wordsOf(line, added[n], "-") : line}</del>`));
      added.forEach((line, n) => out.push(html`<ins>+ ${n < removed.length ? wordsOf(removed[n], line, "+") : line}</ins>`));
      index = after;
    } else if (sign === "+") {
      out.push(html`<ins>+ ${lines[index].slice(1)}</ins>`);
      index += 1;
    } else if (sign === "\\") {
      index += 1; // "\ No newline at end of file"
    } else {
      out.push(html`<span class="ctx">  ${lines[index].slice(1)}</span>`);
      index += 1;
    }
  }
  return out;
}

/** Two texts' difference folded to the changed hunks (three lines of context around each; the
 * unchanged lines between said as a count), removed lines <del>, added <ins>, the changed words
 * inside a changed line marked; **Show every line** unfolds it. */
export function Difference({ before, after, label }) {
  const [whole, setWhole] = useState(false);
  const old = before ?? "";
  const now = after ?? "";
  const patch = useMemo(() => structuredPatch("before", "after", old, now, "", "", { context: whole ? Number.MAX_SAFE_INTEGER : 3 }), [old, now, whole]);
  const hunks = patch.hunks;
  const total = now.split("\n").length - (now.endsWith("\n") ? 1 : 0); // a last newline ends a line, it starts none
  let shownUpTo = 1;
  const parts = [];
  hunks.forEach((hunk, index) => {
    if (hunk.newStart > shownUpTo) {
      const skipped = hunk.newStart - shownUpTo;
      parts.push(html`<span class="fold" key=${"f" + index}>⋯ ${skipped} unchanged ${skipped === 1 ? "line" : "lines"}</span>`);
    }
    parts.push(html`<span class="hunk" key=${"h" + index}>Lines ${hunk.newStart}–${hunk.newStart + Math.max(0, hunk.newLines - 1)}</span>`);
    parts.push(...hunkLines(hunk.lines));
    shownUpTo = hunk.newStart + hunk.newLines;
  });
  if (hunks.length && shownUpTo <= total && !whole) {
    const skipped = total - shownUpTo + 1;
    if (skipped > 0 && now.length) parts.push(html`<span class="fold" key="end">⋯ ${skipped} unchanged ${skipped === 1 ? "line" : "lines"}</span>`);
  }
  return html`<figure class="difference">
    <figcaption>${label}${hunks.length ? "" : " (no difference)"}
      ${hunks.length ? html` <button type="button" class="link" aria-pressed=${whole} onClick=${() => setWhole(!whole)}>${whole ? "Fold unchanged lines" : "Show every line"}</button>` : null}</figcaption>
    <pre aria-label=${label}>${parts}</pre>
  </figure>`;
}

function Conflict({ project, path, mine, theirs, onKept, onMerge }) {
  const act = useAction();
  const keepMine = () =>
    act.run(() => call("PUT", pageUrl(project, path), { body: { content: mine, if_version: theirs.version ?? "absent" } })).then(
      (answer) => answer && onKept(),
    );
  return html`<section class="card conflict" aria-labelledby="conflict-title">
    <h4 id="conflict-title">Conflict: someone else saved first</h4>
    <p>${theirs.content === null
      ? html`Your edit was not saved: someone deleted this page after you began.`
      : html`Your edit was not saved: <strong>${theirs.last_write?.actor ?? "someone"}</strong> saved this page
          ${theirs.last_write?.at ? html` <${When} iso=${theirs.last_write.at} />` : ""} after you began
          (<span title=${theirs.version}>their version</span>).`}${" "}
      Nothing is written until you choose: <strong>Keep mine</strong> saves your text over theirs,${" "}
      <strong>Keep theirs</strong> drops your edit, <strong>Merge by hand</strong> takes your text back to the editor on top of theirs.</p>
    <div class="both">
      <div><h5>Their version</h5><pre aria-label="Their version">${theirs.content ?? "(deleted)"}</pre></div>
      <div><h5>Your version</h5><pre aria-label="Your version">${mine}</pre></div>
    </div>
    <${Difference} before=${theirs.content ?? ""} after=${mine} label="Difference from their version to yours" />
    <div class="row">
      <button type="button" class="primary" disabled=${act.busy} onClick=${keepMine}>Keep mine</button>
      <button type="button" disabled=${act.busy} onClick=${onKept}>Keep theirs</button>
      <button type="button" disabled=${act.busy} onClick=${() => onMerge(mine, theirs.version)}>Merge by hand</button>
    </div>
    <${Problem} error=${act.error} />
  </section>`;
}

/** What the text will look like, drawn by the same safe renderer as the page itself. */
function Preview({ text, path, known }) {
  const [coloured, recolour] = useState(0);
  const drawn = useMemo(() => renderPage(body(text), path, known), [text, path, known, coloured]);
  useGrammars(drawn.grammars, () => recolour((n) => n + 1));
  return html`<div class="preview" role="region" aria-label="Preview"><p class="muted preview-label" aria-hidden="true">Preview</p><div class="page-body">${drawn.body}</div></div>`;
}

/** Ctrl-S or Cmd-S saves (the form's own submit), instead of the browser's Save page. */
const saveKey = (form) => (event) => {
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
    event.preventDefault();
    form.current?.requestSubmit();
  }
};

function Editor({ project, path, page, known, onDone }) {
  const [text, setText] = useState(page.content);
  const [base, setBase] = useState(page.version);
  const [conflict, setConflict] = useState(null);
  const act = useAction();
  const form = useRef(null);
  const save = async (event) => {
    event.preventDefault();
    if (act.busy) return;
    const answer = await act.run(() => call("PUT", pageUrl(project, path), { body: { content: text, if_version: base } }));
    if (answer) return onDone(answer);
  };
  useEffect(() => {
    if (act.error?.status !== 409) return;
    get(pageUrl(project, path)).then(
      (theirs) => setConflict({ mine: text, theirs }),
      (error) => (error.status === 404 ? setConflict({ mine: text, theirs: { content: null, version: null } }) : null),
    );
  }, [act.error]);
  if (conflict) {
    return html`<${Conflict} project=${project} path=${path} mine=${conflict.mine} theirs=${conflict.theirs}
      onKept=${() => onDone(null)}
      onMerge=${(mine, version) => {
        setText(mine);
        setBase(version ?? "absent");
        setConflict(null);
      }} />`;
  }
  return html`<form class="editor" onSubmit=${save} ref=${form} onKeyDown=${saveKey(form)}>
    <div class="split">
      <label>Content<textarea name="content" rows="18" value=${text} onInput=${(event) => setText(event.currentTarget.value)}></textarea></label>
      <${Preview} text=${text} path=${path} known=${known} />
    </div>
    <p class="muted">Ctrl-S (⌘-S) saves. Saving asks for the version you opened: if someone else saved since, you choose what to keep.</p>
    <div class="row">
      <button type="submit" class="primary" disabled=${act.busy}>Save</button>
      <button type="button" onClick=${() => onDone(null)}>Cancel</button>
    </div>
    ${act.error?.status === 409 ? html`<p role="status">Someone else saved first; reading their version…</p>` : html`<${Problem} error=${act.error} />`}
  </form>`;
}

/** History: the versions, and the difference between two of them; the pair shown lives in the
 * address (`mode=history&from=…&to=…`), so Back and a shared link return to it. */
function History({ project, path, current, query, onReverted }) {
  const versions = useLoad(() => get(`${kb(project)}/versions`, { path, limit: 200 }), [project, path]);
  const [pair, setPair] = useState({ from: "", to: "" });
  const read = (version) => get(pageUrl(project, path), { version }).then((answer) => answer.content);
  const shownLoad = useLoad(
    async () => (query.from && query.to ? { before: await read(query.from), after: await read(query.to), from: query.from, to: query.to } : null),
    [project, path, query.from, query.to],
  );
  const shown = shownLoad.data;
  const act = useAction();
  const compare = (from, to) => go({ page: path, mode: "history", from, to });
  const revert = (version) =>
    act.run(
      () => post(`${pageUrl(project, path)}/revert`, { version, if_version: current ?? "absent" }),
      `Reverted to version ${short(version)}.`,
    ).then((answer) => answer && onReverted());
  return html`<section aria-labelledby="history-title">
    <h4 id="history-title">History</h4>
    <${Problem} error=${shownLoad.error} />
    <${Loaded} load=${versions} what="the page's versions">${(data) => {
      const kept = data.versions.filter((v) => v.version && v.kept);
      const named = (version) => {
        const v = kept.find((entry) => entry.version === version);
        return v ? `${when(v.at)} (${v.actor})` : short(version);
      };
      const from = pair.from || query.from || kept[1]?.version || "";
      const to = pair.to || query.to || kept[0]?.version || "";
      return html`
        <form onSubmit=${(event) => {
          event.preventDefault();
          compare(from, to);
        }}>
          <label>From version<select value=${from} onChange=${(event) => setPair({ from: event.currentTarget.value, to })}>
            ${kept.map((v) => html`<option key=${v.id} value=${v.version} title=${v.version}>${versionName(v)}</option>`)}
          </select></label>
          <label>To version<select value=${to} onChange=${(event) => setPair({ from, to: event.currentTarget.value })}>
            ${kept.map((v) => html`<option key=${v.id} value=${v.version} title=${v.version}>${versionName(v)}</option>`)}
          </select></label>
          <button type="submit" disabled=${act.busy || kept.length < 2}>Show difference</button>
        </form>
        ${shown ? html`<${Difference} before=${shown.before} after=${shown.after} label=${`Difference from ${named(shown.from)} to ${named(shown.to)}`} />` : null}
        <table>
          <caption class="visually-hidden">Versions of ${path}, newest first</caption>
          <thead><tr><th scope="col">At</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Version</th><th scope="col">Size</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>${data.versions.map((v) => html`<tr key=${v.id}>
            <td data-label="At"><${When} iso=${v.at} /></td><td data-label="Who">${v.actor}</td>
            <td data-label="What">${v.op}${v.summary ? " · " + v.summary : ""}${v.current ? html` <strong>(current)</strong>` : null}</td>
            <td data-label="Version">${v.version ? html`<${Id} value=${v.version} label=${"version of " + when(v.at)} />` : "none"}${v.version && !v.kept ? " (forgotten)" : ""}</td>
            <td data-label="Size"><${Bytes} count=${v.size_bytes} /></td>
            <td>${v.version && v.kept && !v.current
              ? html`<button type="button" disabled=${act.busy} onClick=${() => revert(v.version)} aria-label=${`Revert to ${short(v.version)}`}>Revert</button>`
              : null}</td>
          </tr>`)}</tbody>
        </table>`;
    }}<//>
    <${Problem} error=${act.error} /><${Notice} text=${act.notice} />
  </section>`;
}

function Remove({ project, path, version, onDeleted, onCancel }) {
  const [forget, setForget] = useState(false);
  const keep = useRef(null);
  useEffect(() => keep.current?.focus(), []); // asked in place; Enter keeps the page
  const act = useAction();
  const remove = async (event) => {
    event.preventDefault();
    const answer = await act.run(async () => {
      const gone = await call("DELETE", pageUrl(project, path), { query: { if_version: version } });
      if (forget) await call("DELETE", `${kb(project)}/versions`, { query: { path } });
      return gone;
    });
    if (answer) onDeleted();
  };
  return html`<form class="card" onSubmit=${remove} aria-label="Delete this page" aria-describedby="delete-what">
    <p id="delete-what">${forget
      ? `Delete ${path} and forget every kept version of it: the page and its history are gone for good, and links to it lead nowhere.`
      : `Delete ${path}: the page leaves the base and links to it lead nowhere; its kept versions stay in History.`}</p>
    <label class="check"><input type="checkbox" checked=${forget} onChange=${(event) => setForget(event.currentTarget.checked)} />Forget its history too</label>
    <div class="row">
      <button type="submit" class="danger" disabled=${act.busy}>Delete page</button>
      <button type="button" ref=${keep} onClick=${onCancel}>Keep it</button>
    </div>
    <${Problem} error=${act.error} />
  </form>`;
}

/** The rendered body with its table of contents (from two headings); a heading's link is an
 * address (`at=h-…`), so it is kept, shared and undone by Back like any other view. */
/** Below 40 rem (a phone) the table of contents starts folded, so the page's body is on the
 * first screen; it opens with a tap. */
const NARROW = "(max-width: 40rem)";

function PageBody({ content, path, known, at }) {
  const [narrow] = useState(() => window.matchMedia(NARROW).matches);
  const [coloured, recolour] = useState(0); // drawn at once, coloured once its grammars are here
  const { body: children, headings, grammars } = useMemo(
    () => renderPage(body(content), path, known),
    [content, path, known, coloured],
  );
  useGrammars(grammars, () => recolour((n) => n + 1));
  useEffect(() => {
    if (!at) return;
    const target = document.getElementById(at);
    if (target) {
      target.scrollIntoView({ block: "start" });
      target.focus({ preventScroll: true });
    }
  }, [at, content]);
  // a link to the heading the address already names changes no address: it goes there again
  const again = (event) => {
    const link = event.target.closest?.("a[href]");
    if (!link || link.getAttribute("href") !== window.location.hash || !at) return;
    const target = document.getElementById(at);
    if (!target) return;
    event.preventDefault();
    target.scrollIntoView({ block: "start" });
    target.focus({ preventScroll: true });
  };
  return html`${headings.length >= 2
      ? html`<nav class="toc" aria-label="On this page" onClick=${again}><details open=${!narrow}>
          <summary><h4>On this page <span class="muted">(${headings.length})</span></h4></summary><ol>${headings.map(
          (entry) => html`<li key=${entry.id} class=${"toc-" + entry.level}><a href=${pageHref(path, { at: entry.id })} aria-current=${at === entry.id ? "location" : null}>${entry.text}</a></li>`,
        )}</ol></details></nav>`
      : null}
    <div class="page-body" aria-label="Page body" role="region" onClick=${again}>${children}</div>`;
}

function PageView({ project, path, query, rows, known, reloadRows }) {
  const [tick, setTick] = useState(0);
  const page = useLoad(() => get(pageUrl(project, path)), [project, path, tick]);
  const backlinks = useLoad(() => get(`${kb(project)}/backlinks`, { path }), [project, path, tick]);
  // Edit and Delete are this visit's own (unsaved text is never an address); History is a view
  // and lives in the address.
  const [local, setLocal] = useState("read");
  const mode = local !== "read" ? local : query.mode === "history" ? "history" : "read";
  const setMode = (next) => {
    setLocal(next === "history" ? "read" : next);
    if (next === "history" && query.mode !== "history") go({ page: path, mode: "history" });
    else if (next !== "history" && query.mode === "history") go({ page: path });
  };
  const act = useAction();
  const row = rows.find((entry) => entry.path === path);
  const heading = useRef(null);
  useEffect(() => {
    if (route.hasMoved()) heading.current?.focus(); // a page opened: its title has the focus
  }, []);
  const again = () => {
    setTick((n) => n + 1);
    reloadRows();
    heading.current?.focus(); // after Save, Revert, Review: back to the page
  };
  const review = () =>
    act.run(() => post(`${pageUrl(project, path)}/review`, { if_version: page.data.version }), "Reviewed.").then(
      (answer) => answer && again(),
    );
  const title = pageTitle(row?.title, page.data?.content, path);
  return html`<article class="wiki-page" aria-labelledby="page-title">
    <${Crumbs} path=${path} known=${known} last=${title} />
    <h3 id="page-title" tabindex="-1" ref=${heading}>${pageTitle(row?.title, page.data?.content, path)}</h3>
    <p class="muted">${path}</p>
    <dl class="facts frontmatter">
      <dt>Type</dt><dd>${row?.page_type ?? html`<span class="muted">none</span>`}</dd>
      <dt>Status</dt><dd>${row?.status ?? html`<span class="muted">none</span>`}</dd>
      <dt>Tags</dt><dd><${Tags} tags=${row?.tags} /></dd>
      <dt>Trust</dt><dd><${Trust} row=${row} /></dd>
      <dt>Review</dt><dd>${row?.verified_by ? `${row.verified_by} at ${when(row.verified_at)}` : "never reviewed"}${row?.stale ? " (stale)" : ""}</dd>
      <dt>Last write</dt><dd>${page.data ? `${page.data.last_write?.actor ?? ""} at ${when(page.data.last_write?.at)}, version ${short(page.data.version)}` : ""}</dd>
    </dl>
    <div class="row" role="group" aria-label="Page actions">
      <button type="button" aria-pressed=${mode === "edit"} onClick=${() => setMode("edit")} disabled=${!page.data}>Edit</button>
      <button type="button" onClick=${review} disabled=${!page.data || act.busy}>Review</button>
      <button type="button" aria-pressed=${mode === "history"} onClick=${() => setMode(mode === "history" ? "read" : "history")}>History</button>
      <button type="button" class="danger" onClick=${() => setMode("delete")} disabled=${!page.data}>Delete</button>
    </div>
    <${Problem} error=${act.error} /><${Notice} text=${act.notice} />
    <${Loaded} load=${page} what=${path}>${(data) => {
      if (mode === "edit") {
        return html`<${Editor} key=${data.version} project=${project} path=${path} page=${data} known=${known} onDone=${() => {
          setMode("read");
          again();
        }} />`;
      }
      return html`
        ${mode === "delete" ? html`<${Remove} project=${project} path=${path} version=${data.version}
            onCancel=${() => setMode("read")} onDeleted=${() => {
              reloadRows();
              go({ dir: parent(path), deleted: path });
            }} />` : null}
        ${mode === "history" ? html`<${History} project=${project} path=${path} current=${data.version} query=${query} onReverted=${again} />` : null}
        <${PageBody} content=${data.content} path=${path} known=${known} at=${query.at} />`;
    }}<//>
    <section aria-labelledby="backlinks-title">
      <h4 id="backlinks-title">Backlinks</h4>
      <${Loaded} load=${backlinks} what="the backlinks">${(links) =>
        links.length === 0
          ? html`<p class="muted">No page links here.</p>`
          : html`<ul>${links.map((link) => html`<li key=${link.path}><a href=${pageHref(link.path)}>${link.title || link.path}</a></li>`)}</ul>`}<//>
    </section>
  </article>`;
}

/** New page: a path nobody holds yet (`if_version: "absent"`); a path that is taken is said in
 * words, with the page to open instead. */
function NewPage({ project, known, onMade }) {
  const [path, setPath] = useState("");
  const [content, setContent] = useState(NEW_PAGE);
  const [taken, setTaken] = useState(null);
  const act = useAction();
  const form = useRef(null);
  const canonical = (typed) => "/fs/" + typed.trim().replace(/^\/+/, "").replace(/^fs\//, "");
  const make = async (event) => {
    event.preventDefault();
    if (act.busy) return;
    setTaken(null);
    const asked = path.trim();
    const answer = await act.run(() => call("PUT", pageUrl(project, asked), { body: { content, if_version: "absent" } }));
    if (answer) onMade(answer.path);
  };
  useEffect(() => {
    if (act.error?.status === 409) setTaken(canonical(path));
  }, [act.error]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">New page</h3>
    <form onSubmit=${make} ref=${form} onKeyDown=${saveKey(form)} class="editor">
      <label>Path<input name="path" required placeholder="notes/deploy.md" value=${path} onInput=${(event) => setPath(event.currentTarget.value)} /></label>
      <div class="split">
        <label>Content<textarea name="content" rows="14" value=${content} onInput=${(event) => setContent(event.currentTarget.value)}></textarea></label>
        <${Preview} text=${content} path=${canonical(path || "new.md")} known=${known} />
      </div>
      <button type="submit" class="primary" disabled=${act.busy}>Create</button>
    </form>
    <p class="muted">Creating asks for a path nobody holds yet; Ctrl-S (⌘-S) creates too.</p>
    ${taken
      ? html`<div class="error" role="alert"><p>A page already exists at ${taken}: nothing was written.${" "}
          <a href=${pageHref(taken)}>Open that page</a>, or choose another path.</p>
          <p class="muted">${act.error?.message}</p></div>`
      : html`<${Problem} error=${act.error} />`}
  </section>`;
}

const LINT_COLUMNS = [
  { key: "code", label: "Finding", value: (row) => row.code, cell: (row) => row.code.replaceAll("_", " ") },
  { key: "path", label: "Page", cell: (row) => html`<a href=${pageHref(row.path)}><span class="path">${row.path}</span></a>` },
  { key: "line", label: "Line", value: (row) => row.line ?? "" },
  { key: "message", label: "What" },
];

function Lint({ project }) {
  const [fresh, setFresh] = useState(0);
  const lint = useLoad(() => get(`${kb(project)}/lint`, fresh ? { fresh: 1 } : {}), [project, fresh]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Lint</h3>
    <button type="button" onClick=${() => setFresh((n) => n + 1)}>Check again</button>
    <${Loaded} load=${lint} what="the lint findings">${(data) => html`
      <p>${data.findings.length} ${data.findings.length === 1 ? "finding" : "findings"}, checked ${when(data.checked_at)}.</p>
      ${data.findings.length === 0 ? null : html`<${Table} caption="Lint findings" rows=${data.findings} columns=${LINT_COLUMNS} />`}`}<//>
  </section>`;
}

function Stats({ project }) {
  const stats = useLoad(() => get(`${kb(project)}/stats`), [project]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">Stats</h3>
    <${Loaded} load=${stats} what="the base's figures">${(data) => html`<dl class="facts">
      <dt>Pages</dt><dd>${data.pages}</dd>
      <dt>Size</dt><dd><${Bytes} count=${data.bytes} /></dd>
      <dt>Unverified</dt><dd>${data.unverified}</dd>
      <dt>Stale</dt><dd>${data.stale}</dd>
      <dt>Needs review</dt><dd>${data.needs_review.total} (unverified ${data.needs_review.unverified}, confirmed by a machine ${data.needs_review.machine_confirmed}, edited since review ${data.needs_review.edited_since_review})</dd>
      <dt>Last change</dt><dd>${data.last_change_by ?? ""} <${When} iso=${data.last_change_at} /></dd>
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
function SearchPages({ project, query }) {
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

const VIEWS = [
  ["recent", "Recent changes"],
  ["review", "Needs review"],
  ["search", "Search pages"],
  ["lint", "Lint"],
  ["stats", "Stats"],
  ["new", "New page"],
];

export default function Wiki() {
  const { project } = useConsole();
  const query = useAddress();
  const listing = useLoad(() => (project ? listAll(project) : Promise.resolve([])), [project]);
  const known = useMemo(() => new Map((listing.data ?? []).map((row) => [row.path, row])), [listing.data]);
  const view = query.page ? "page" : query.view ?? "dir";
  const opened = useRef(false);
  useEffect(() => {
    // the listing feeds the tree and these views: opening one of them reads it afresh
    if (opened.current && (view === "recent" || view === "review" || view === "dir")) listing.reload();
    opened.current = true;
  }, [view, query.dir]);
  if (!project) {
    return html`<p>The wiki is a project's knowledge base: pick a project in the bar.</p>`;
  }
  const current = query.page ?? query.dir ?? null;
  return html`<nav class="wiki-views" aria-label="Wiki views"><ul>
      <li><a href=${dirHref("/fs")} aria-current=${view === "dir" ? "page" : null}>Directory view</a></li>
      ${VIEWS.map(([id, name]) => html`<li key=${id}><a href=${route.href("wiki", { view: id })} aria-current=${view === id ? "page" : null}>${name}</a></li>`)}
    </ul></nav>
    ${query.deleted ? html`<p role="status" class="notice">Deleted ${query.deleted}.</p>` : null}
    <${Loaded} load=${listing} what="the knowledge base's pages">${(rows) => html`<div class="wiki">
      <${Tree} project=${project} rows=${rows} current=${current} />
      <div class="wiki-main">
        ${view === "page" ? html`<${PageView} key=${query.page} project=${project} path=${query.page} query=${query} rows=${rows} known=${known} reloadRows=${listing.reload} />` : null}
        ${view === "dir" ? html`<${DirectoryView} dir=${query.dir ?? "/fs"} rows=${rows} />` : null}
        ${view === "review" ? html`<${NeedsReview} rows=${rows} />` : null}
        ${view === "recent" ? html`<${RecentChanges} rows=${rows} />` : null}
        ${view === "search" ? html`<${SearchPages} project=${project} query=${query} />` : null}
        ${view === "lint" ? html`<${Lint} project=${project} />` : null}
        ${view === "stats" ? html`<${Stats} project=${project} />` : null}
        ${view === "new" ? html`<${NewPage} project=${project} known=${known} onMade=${(path) => {
          listing.reload();
          go({ page: path });
        }} />` : null}
      </div>
    </div>`}<//>`;
}
