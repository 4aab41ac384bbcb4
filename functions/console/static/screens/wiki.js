// The wiki (issue 29): the bar's project's knowledge base read, edited, reviewed and searched over
// the pages API (/api/v1/projects/{id}/kb/*). Loaded only when the Wiki section opens, with its
// vendored markdown-it (and its plugins), diff and Prism. This module draws the section: the views'
// navigation, the page tree (a drawer on a phone) and the view the address names, from one table.
// The rest is in its own modules: wiki-common.js (the API, names), wiki-tree.js, wiki-page.js,
// wiki-edit.js (editing, drafts and the guard), wiki-history.js, wiki-views.js (the base's views),
// wiki-markdown.js (safe rendering), wiki-highlight.js. docs/console.md, The wiki.
import { html, useEffect, useMemo, useRef, useState } from "../vendor/preact-htm.module.js";
import { Loaded, useAddress, useConsole, useLoad } from "../ui.js";
import * as route from "../route.js";
import { go, listAll, setTitle } from "./wiki-common.js";
import { NewPage } from "./wiki-edit.js";
import { dirHref } from "./wiki-markdown.js";
import { PageView } from "./wiki-page.js";
import { Tree } from "./wiki-tree.js";
import { DirectoryView, Lint, NeedsReview, RecentChanges, SearchPages, Stats } from "./wiki-views.js";

/** Every view the address can name (`view=`; a page is `page=`, a directory `dir=`): its name in
 * the views' navigation and the tab's title, and how it is drawn. `reads` marks the views drawn
 * from the listing, read afresh when one opens. */
const VIEWS = {
  dir: { name: "Directory view", reads: true, draw: (it) => html`<${DirectoryView} dir=${it.query.dir ?? "/fs"} rows=${it.rows} />` },
  recent: { name: "Recent changes", reads: true, draw: (it) => html`<${RecentChanges} rows=${it.rows} />` },
  review: { name: "Needs review", reads: true, draw: (it) => html`<${NeedsReview} rows=${it.rows} />` },
  search: { name: "Search pages", draw: (it) => html`<${SearchPages} project=${it.project} query=${it.query} />` },
  lint: { name: "Lint", draw: (it) => html`<${Lint} project=${it.project} />` },
  stats: { name: "Stats", draw: (it) => html`<${Stats} project=${it.project} />` },
  new: {
    name: "New page",
    draw: (it) => html`<${NewPage} project=${it.project} known=${it.known} onMade=${(path) => {
      it.reload();
      go({ page: path });
    }} />`,
  },
  page: {
    draw: (it) => html`<${PageView} key=${it.query.page} project=${it.project} path=${it.query.page} query=${it.query}
      rows=${it.rows} known=${it.known} reloadRows=${it.reload} />`,
  },
};

/** Below this width the tree is a drawer (console.css). */
const PHONE = "(max-width: 40rem)";

export default function Wiki() {
  const { project } = useConsole();
  const query = useAddress();
  const listing = useLoad(() => (project ? listAll(project) : Promise.resolve([])), [project]);
  const known = useMemo(() => new Map((listing.data ?? []).map((row) => [row.path, row])), [listing.data]);
  const view = query.page ? "page" : VIEWS[query.view] ? query.view : "dir";
  // on a phone the tree is a drawer: **Pages** opens it; a move, Escape or its close button closes it
  const [drawer, setDrawer] = useState(false);
  const toggle = useRef(null);
  const address = JSON.stringify(query);
  useEffect(() => setDrawer(false), [address]);
  const closeDrawer = () => {
    setDrawer(false);
    toggle.current?.focus();
  };
  const inTree = useRef(null); // the tree's entry the focus was last on, while it has been nowhere else since
  useEffect(() => {
    // a window narrowed while the person is in the tree keeps it open, as the drawer, the focus
    // where it was; widened, the tree is beside the page again
    const seen = (event) => {
      inTree.current = document.getElementById("wiki-tree")?.contains(event.target) ? event.target : null;
    };
    const phone = window.matchMedia(PHONE);
    const follow = () => {
      const entry = inTree.current;
      if (!phone.matches) setDrawer(false);
      else if (entry) setDrawer(true);
      if (entry) requestAnimationFrame(() => entry.isConnected && document.activeElement !== entry && entry.focus());
    };
    document.addEventListener("focusin", seen);
    phone.addEventListener("change", follow);
    return () => {
      document.removeEventListener("focusin", seen);
      phone.removeEventListener("change", follow);
    };
  }, []);
  const opened = useRef(false);
  useEffect(() => {
    // the listing feeds the tree and these views: opening one of them reads it afresh
    if (opened.current && VIEWS[view].reads) listing.reload();
    opened.current = true;
  }, [view, query.dir]);
  useEffect(() => {
    if (view !== "page") setTitle(VIEWS[view].name);
  }, [view]);
  if (!project) {
    return html`<p>The wiki is a project's knowledge base: pick a project in the bar.</p>`;
  }
  const current = query.page ?? query.dir ?? null;
  const links = Object.entries(VIEWS).filter(([id]) => id !== "page" && id !== "dir");
  return html`<div class="wiki-top">
      <button type="button" class="tree-toggle" ref=${toggle} aria-expanded=${drawer ? "true" : "false"} aria-controls="wiki-tree"
        onClick=${() => setDrawer(!drawer)}>Pages</button>
      <nav class="wiki-views" aria-label="Wiki views"><ul>
        <li><a href=${dirHref("/fs")} aria-current=${view === "dir" ? "page" : null}>Directory view</a></li>
        ${links.map(([id, entry]) => html`<li key=${id}><a href=${route.href("wiki", { view: id })} aria-current=${view === id ? "page" : null}>${entry.name}</a></li>`)}
      </ul></nav>
    </div>
    ${query.deleted ? html`<p role="status" class="notice">Deleted ${query.deleted}.</p>` : null}
    <${Loaded} load=${listing} what="the knowledge base's pages">${(rows) => html`<div class="wiki">
      <div class="wiki-side" id="wiki-tree"><${Tree} project=${project} rows=${rows} current=${current} drawer=${drawer} close=${closeDrawer} /></div>
      <div class="wiki-main">${VIEWS[view].draw({ project, query, rows, known, reload: listing.reload })}</div>
    </div>`}<//>`;
}
