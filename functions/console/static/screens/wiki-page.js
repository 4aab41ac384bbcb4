// A page of the wiki: its title, frontmatter facts and last write, the body first with "On this
// page" beside it (a side column at desktop widths, folded above the body when narrow), Edit,
// Review, History, Delete, a kept draft offered back, and its backlinks. docs/console.md, The wiki.
import { html, useEffect, useMemo, useRef, useState } from "../vendor/preact-htm.module.js";
import { Loaded, Notice, Problem, useAction, useLoad, when } from "../ui.js";
import * as route from "../route.js";
import { Tags, Trust, call, get, go, isEscape, kb, pageUrl, post, setTitle, short, who } from "./wiki-common.js";
import { DraftOffer, Editor, dropDraft, readDraft } from "./wiki-edit.js";
import { useGrammars } from "./wiki-highlight.js";
import { History } from "./wiki-history.js";
import { body, pageHref, pageTitle, parent, renderPage, usePlugins } from "./wiki-markdown.js";
import { Crumbs } from "./wiki-views.js";

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
  const escape = (event) => {
    if (isEscape(event)) {
      event.preventDefault();
      onCancel();
    }
  };
  return html`<form class="card" onSubmit=${remove} onKeyDown=${escape} aria-label="Delete this page" aria-describedby="delete-what">
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

/** From this width "On this page" stands open in a column beside the body; below it, it is folded
 * above the body (a tap opens it), so the body is on the first screen. */
const WIDE = "(min-width: 75rem)";

function useWide() {
  const [wide, setWide] = useState(() => window.matchMedia(WIDE).matches);
  useEffect(() => {
    const query = window.matchMedia(WIDE);
    const follow = () => setWide(query.matches);
    query.addEventListener("change", follow);
    return () => query.removeEventListener("change", follow);
  }, []);
  return wide;
}

/** The rendered body with its table of contents (from two headings); a heading's link is an
 * address (`at=h-…`), so it is kept, shared and undone by Back like any other view. */
function PageBody({ content, path, known, at }) {
  const wide = useWide();
  const [coloured, recolour] = useState(0); // drawn at once, coloured once its grammars are here
  const { body: children, headings, grammars, plugins } = useMemo(
    () => renderPage(body(content), path, known),
    [content, path, known, coloured],
  );
  useGrammars(grammars, () => recolour((n) => n + 1));
  usePlugins(plugins, () => recolour((n) => n + 1)); // drawn again with the extensions it needs
  useEffect(() => {
    if (!at) return;
    const target = document.getElementById(at);
    if (target) {
      target.scrollIntoView({ block: "start" });
      target.focus({ preventScroll: true });
    }
  }, [at, content, plugins.length === 0]);
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
  const toc = headings.length >= 2;
  return html`<div class=${toc ? "page-layout with-toc" : "page-layout"}>
    <div class="page-body" aria-label="Page body" role="region" onClick=${again}>${children}</div>
    ${toc
      ? html`<nav class="toc" aria-label="On this page" onClick=${again}><details open=${wide} key=${wide ? "wide" : "narrow"}>
          <summary><h4>On this page <span class="muted">(${headings.length})</span></h4></summary><ol>${headings.map(
          (entry) => html`<li key=${entry.id} class=${"toc-" + entry.level}><a href=${pageHref(path, { at: entry.id })} aria-current=${at === entry.id ? "location" : null}>${entry.text}</a></li>`,
        )}</ol></details></nav>`
      : null}
  </div>`;
}

export function PageView({ project, path, query, rows, known, reloadRows }) {
  const [tick, setTick] = useState(0);
  const page = useLoad(() => get(pageUrl(project, path)), [project, path, tick]);
  const backlinks = useLoad(() => get(`${kb(project)}/backlinks`, { path }), [project, path, tick]);
  // Edit and Delete are this visit's own (unsaved text is never an address); History is a view
  // and lives in the address. A move (the address changing) closes them.
  const [local, setLocal] = useState("read");
  const [draft, setDraft] = useState(() => readDraft(project, path));
  const address = JSON.stringify(query);
  useEffect(() => setLocal("read"), [address]);
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
  useEffect(() => setTitle(title), [title]);
  useEffect(() => () => setTitle(null), []);
  const editing = mode === "edit";
  const lastWrite = page.data?.last_write;
  return html`<article class="wiki-page" aria-labelledby="page-title">
    <${Crumbs} path=${path} known=${known} last=${title} />
    <h3 id="page-title" tabindex="-1" ref=${heading}>${title}</h3>
    <dl class="facts frontmatter">
      <dt>File</dt><dd class="path">${path}</dd>
      <dt>Type</dt><dd>${row?.page_type ?? html`<span class="muted">none</span>`}</dd>
      <dt>Status</dt><dd>${row?.status ?? html`<span class="muted">none</span>`}</dd>
      <dt>Tags</dt><dd><${Tags} tags=${row?.tags} /></dd>
      <dt>Trust</dt><dd><${Trust} row=${row} /></dd>
      <dt>Review</dt><dd>${row?.verified_by ? `${row.verified_by} at ${when(row.verified_at)}` : "never reviewed"}${row?.stale ? " (stale)" : ""}</dd>
      <dt>Last write</dt><dd>${page.data ? `${who(lastWrite?.principal, lastWrite?.actor)} at ${when(lastWrite?.at)}, version ${short(page.data.version)}` : ""}</dd>
    </dl>
    <div class="row" role="group" aria-label="Page actions">
      <button type="button" aria-pressed=${editing} onClick=${() => setMode("edit")} disabled=${!page.data || editing}>Edit</button>
      <button type="button" onClick=${review} disabled=${!page.data || act.busy || editing}>Review</button>
      <button type="button" aria-pressed=${mode === "history"} disabled=${editing} onClick=${() => setMode(mode === "history" ? "read" : "history")}>History</button>
      <button type="button" class="danger" onClick=${() => setMode("delete")} disabled=${!page.data || editing}>Delete</button>
    </div>
    <${Problem} error=${act.error} /><${Notice} text=${act.notice} />
    <${Loaded} load=${page} what=${path}>${(data) => {
      if (editing) {
        return html`<${Editor} key=${data.version} project=${project} path=${path} page=${data} known=${known} draft=${draft}
          onDone=${(answer) => {
            setDraft(readDraft(project, path));
            setMode("read");
            if (answer) again();
            else heading.current?.focus();
          }} />`;
      }
      return html`
        ${draft && mode === "read"
          ? html`<${DraftOffer} draft=${draft} version=${data.version} onRestore=${() => setMode("edit")} onDiscard=${() => {
              dropDraft(project, path);
              setDraft(null);
            }} />`
          : null}
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
