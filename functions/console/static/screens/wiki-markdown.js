// A page's markdown drawn as DOM, safely, whoever wrote it (agents write pages too). markdown-it
// (vendored, html disabled) only parses: its tokens become Preact elements here, never an HTML
// string, so raw HTML stays text, and only these tags and attributes can exist. A link is
// clickable only when it names a page or a directory of the base (then it opens in the wiki) or
// an http(s) address; any other scheme (javascript:, data:, vbscript:, …) is drawn as inert text.
// A fenced block in a language Prism knows is coloured the same way: tokens to elements
// (wiki-highlight.js). docs/console.md, The wiki.
import "../vendor/markdown-it.min.js";
import { h } from "../vendor/preact-htm.module.js";
import { href } from "../route.js";
import { grammarOf, highlight } from "./wiki-highlight.js";

const markdownit = globalThis.markdownit;
const parser = markdownit({ html: false, linkify: true, typographer: false });

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const BLOCKS = new Set(["p", "ul", "ol", "li", "blockquote", "em", "strong", "s", "table", "thead", "tbody", "tr", "th", "td"]);

/** The body after the frontmatter block (first line exactly `---`, up to the next `---` line). */
export function body(content) {
  const lines = content.split("\n");
  if (lines[0].replace(/\r$/, "") !== "---") return content;
  const end = lines.findIndex((line, index) => index > 0 && line.replace(/\r$/, "") === "---");
  return end < 0 ? content : lines.slice(end + 1).join("\n");
}

/** The directory a page sits in: "/fs/a/b.md" -> "/fs/a". */
export const parent = (path) => path.slice(0, path.lastIndexOf("/")) || "/fs";

/** The canonical path a page link names, as the hub resolves it; null when it leaves the base. */
export function resolve(from, target) {
  let parts;
  if (target.startsWith("/")) {
    parts = [];
  } else {
    parts = parent(from).split("/").slice(1); // ["fs", ...]
  }
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length <= 1) return null;
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  if (parts[0] !== "fs") parts.unshift("fs");
  return "/" + parts.join("/");
}

/** A heading's anchor as a fragment names it (`#Deploy-the-hub`, as GitHub and most wikis
 * write them): the id this renderer gives that heading ("h-" first). */
export function anchor(fragment) {
  let words = fragment;
  try {
    words = decodeURIComponent(fragment);
  } catch {
    // kept as written
  }
  const slugged = words.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "");
  return slugged ? "h-" + slugged : null;
}

/** Where a link goes: {kind: "page"|"dir"|"broken"|"external"|"inert", path?, href?, at?}. A link
 * written without `.md` (a site's address: `/guide/install`) opens the page `install.md` there; a
 * fragment (`#deploy`, `guide.md#deploy`) names a heading of that page (`at`). */
export function classify(href, from, known) {
  const raw = (href ?? "").trim();
  if (/^https?:\/\//i.test(raw)) return { kind: "external", href: raw };
  if (!raw || raw.startsWith("//") || SCHEME.test(raw)) return { kind: "inert" };
  const hash = raw.indexOf("#");
  const at = hash < 0 ? null : anchor(raw.slice(hash + 1));
  if (raw.startsWith("#")) return at ? { kind: "page", path: from, at } : { kind: "inert" };
  let target;
  try {
    target = decodeURIComponent(raw.split("#")[0].split("?")[0]);
  } catch {
    return { kind: "broken", path: raw };
  }
  if (!target) return { kind: "inert" };
  const path = resolve(from, target.replace(/\/+$/, ""));
  if (path === null) return { kind: "broken", path: target };
  const entry = known.get(path) ?? (/\.[A-Za-z0-9]+$/.test(path) ? undefined : known.get(path + ".md"));
  if (!entry) return { kind: "broken", path };
  if (entry.type === "dir") return { kind: "dir", path: entry.path ?? path };
  return at ? { kind: "page", path: entry.path ?? path, at } : { kind: "page", path: entry.path ?? path };
}

/** A page's and a directory's address in the wiki of the project the address names. */
export const pageHref = (path, more = {}) => href("wiki", { page: path, ...more });
export const dirHref = (path) => href("wiki", { dir: path });

function link(href, children, context) {
  const where = classify(href, context.from, context.known);
  switch (where.kind) {
    case "external":
      return h("a", { href: where.href, rel: "noopener noreferrer nofollow", target: "_blank" }, children);
    case "page":
      if (where.path === context.from && where.at && !context.headings.some((entry) => entry.id === where.at)) {
        // a heading this page does not have: quietly, as a link to no page is
        return h("span", { class: "unresolved-link", title: `No heading ${where.at.slice(2)} on this page` }, children);
      }
      return h("a", { href: where.at ? pageHref(where.path, { at: where.at }) : pageHref(where.path) }, children);
    case "dir":
      return h("a", { href: dirHref(where.path) }, children);
    case "broken":
      // quietly: a lint concern (Lint lists it), not red noise in the text
      return h("span", { class: "unresolved-link", title: `No page at ${where.path}` }, children, h("span", { class: "visually-hidden" }, ` (no page at ${where.path})`));
    default:
      return h("span", { class: "inert-link", title: "Not followed: only pages and http(s) addresses are links" }, children);
  }
}

function element(token, children, context) {
  if (token.hidden) return children; // a tight list's paragraphs
  const tag = token.tag;
  if (tag === "a") return link(token.attrGet("href"), children, context);
  const heading = /^h([1-6])$/.exec(tag);
  if (heading) {
    // under the page's own h3: the page's top level is h4, and no level is skipped (axe's
    // heading-order); the size follows what the author wrote (`#` the largest)
    const written = Number(heading[1]);
    const level = Math.min(6, 4 + (written - context.top), context.last + 1);
    context.last = level;
    const entry = context.headings[context.next++];
    return h(`h${level}`, { class: `md-h${written}`, id: entry?.id, tabindex: "-1" }, children);
  }
  if (!BLOCKS.has(tag)) return h("div", null, children);
  const props = {};
  if (tag === "ol" && /^\d+$/.test(token.attrGet("start") ?? "")) props.start = Number(token.attrGet("start"));
  return h(tag, props, children);
}

/** A code block: coloured when its fence names a language whose grammar is here, else its text. */
function code(token, context) {
  const grammar = token.type === "fence" ? grammarOf(token.info) : null;
  if (grammar) context.grammars.add(grammar);
  const coloured = grammar ? highlight(token.content, grammar) : null;
  return h("pre", null, coloured ? h("code", { class: "highlighted" }, coloured) : h("code", null, token.content));
}

function leaf(token, context) {
  switch (token.type) {
    case "text":
      return token.content;
    case "softbreak":
      return "\n";
    case "hardbreak":
      return h("br", null);
    case "code_inline":
      return h("code", null, token.content);
    case "fence":
    case "code_block":
      return code(token, context);
    case "hr":
      return h("hr", null);
    case "image":
      return h("span", { class: "image-alt" }, `[image: ${token.content || token.attrGet("src") || ""}]`);
    default:
      return token.content || null; // html_block/html_inline cannot occur (html: false); text if they did
  }
}

function build(tokens, context) {
  const stack = [{ children: [] }];
  for (const token of tokens) {
    const top = stack[stack.length - 1].children;
    if (token.type === "inline") {
      top.push(...build(token.children ?? [], context));
    } else if (token.nesting === 1) {
      stack.push({ token, children: [] });
    } else if (token.nesting === -1 && stack.length > 1) {
      const frame = stack.pop();
      stack[stack.length - 1].children.push(element(frame.token, frame.children, context));
    } else {
      top.push(leaf(token, context));
    }
  }
  while (stack.length > 1) {
    const frame = stack.pop();
    stack[stack.length - 1].children.push(element(frame.token, frame.children, context));
  }
  return stack[0].children;
}

/** A heading's anchor: its words, lower case, joined by hyphens ("h-" first; unique on the page). */
function slug(text, taken) {
  const base = "h-" + (text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "") || "section");
  let id = base;
  for (let n = 2; taken.has(id); n += 1) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

/** The page's body as Preact children, its headings (level as written, text, id) for the table of
 * contents, and the grammars its fenced blocks name (wiki-highlight.js's useGrammars loads them;
 * drawn again once they are here, the blocks are coloured). from: the page's path; known: Map
 * path -> listing row. */
export function renderPage(markdown, from, known) {
  const tokens = parser.parse(markdown, {});
  const taken = new Set();
  const headings = [];
  tokens.forEach((token, index) => {
    if (token.type !== "heading_open") return;
    const text = (tokens[index + 1]?.children ?? []).map((child) => child.content).join("").trim();
    headings.push({ level: Number(token.tag.slice(1)), text, id: slug(text, taken) });
  });
  const top = Math.min(...headings.map((entry) => entry.level), 6);
  const context = { from, known, headings, top, last: 3, next: 0, grammars: new Set() };
  return { body: build(tokens, context), headings, grammars: [...context.grammars] };
}

/** The page's body as Preact children. */
export function render(markdown, from, known) {
  return renderPage(markdown, from, known).body;
}

/** A page's title as people name it: frontmatter `title`, else its first `#` heading, else its file name. */
export function pageTitle(title, content, path) {
  if (title) return title;
  const first = /^#\s+(.+?)\s*#*\s*$/m.exec(body(content ?? ""));
  return first ? first[1] : path.slice(path.lastIndexOf("/") + 1);
}
