// The wiki's page tree (the `Page tree` navigation beside every view): the ARIA tree pattern, the
// directories a person opened or closed remembered in this browser, a filter. Sticky beside the
// page at desktop widths; on a phone a drawer opened by **Pages** (wiki.js), closed by Escape, its
// close button or following a link. docs/console.md, The wiki.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm.module.js";
import { fileName, isEscape, titleOf } from "./wiki-common.js";
import { dirHref, pageHref, parent } from "./wiki-markdown.js";

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

/** The tree. `drawer`: open as the phone's drawer (wiki.js's **Pages**); `close` closes it. */
export function Tree({ project, rows, current, drawer = false, close }) {
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
  const nav = useRef(null);
  useEffect(() => {
    // opened as a drawer, the tree has the focus: the page shown, else the first entry
    if (drawer) (nav.current?.querySelector('[tabindex="0"]') ?? nav.current?.querySelector("a"))?.focus();
  }, [drawer]);
  const escape = (event) => {
    if (drawer && isEscape(event)) {
      event.preventDefault();
      close?.();
    }
  };
  return html`<nav class=${drawer ? "wiki-tree open" : "wiki-tree"} aria-label="Page tree" ref=${nav} onKeyDown=${escape}>
    <div class="tree-head"><h3><a href=${dirHref("/fs")}>Pages</a></h3>
      <button type="button" class="tree-close" onClick=${() => close?.()}>Close the page tree</button></div>
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
