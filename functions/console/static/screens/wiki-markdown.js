// A page's markdown drawn as DOM, safely, whoever wrote it (agents write pages too). markdown-it
// (vendored) only parses, with the extensions real documentation uses: admonitions (`!!! note`,
// markdown-it-admon), footnotes (`[^1]`, markdown-it-footnote) and attribute lists (`{ #id }`,
// markdown-it-attrs: read for a heading's anchor, never drawn). Its tokens become Preact elements
// here, never an HTML string, so only these tags and attributes can exist. Raw HTML is read by
// this module, not by the browser: a comment is hidden, a few inline tags (<small>, <kbd>, <sub>,
// <sup>, <mark>, <b>, <i>, …) are drawn as themselves with no attribute, wrappers (<div markdown>,
// <span>, <p>, <details>) are dropped and their contents kept, and any other tag (<script>, <img
// onerror>, <a href>, <svg>, …) is shown as its text. A link is clickable only when it names a page
// or a directory of the base (then it opens in the wiki) or an http(s) address; any other scheme
// (javascript:, data:, vbscript:, …) is drawn as inert text. A fenced block in a language Prism
// knows is coloured the same way: tokens to elements (wiki-highlight.js). docs/console.md, The wiki.
import "../vendor/markdown-it.min.js";
import { h, useEffect } from "../vendor/preact-htm.module.js";
import { href } from "../route.js";
import { grammarOf, highlight } from "./wiki-highlight.js";

const parser = globalThis.markdownit({ html: true, linkify: true, typographer: false });

/** The extensions, each fetched the first time a text shows its syntax (from this fixed table: a
 * page's words never name a file), as a grammar is: a page without them costs nothing more. */
const PLUGINS = {
  admon: {
    hint: /^ {0,3}!!! /m,
    load: () => import("../vendor/markdown-it-admon.min.js"),
    use: () => parser.use(globalThis.markdownitAdmon),
  },
  footnote: {
    hint: /\[\^[^\]\s]+\]/,
    load: () => import("../vendor/markdown-it-footnote.min.js"),
    use: () => parser.use(globalThis.markdownitFootnote),
  },
  attrs: {
    hint: /\{:?\s*(?:[#.][^}\n]*|[\w-]+=[^}\n]*)\}/,
    load: () => import("../vendor/markdown-it-attrs.browser.js"),
    use: () => parser.use(globalThis.markdownItAttrs, { allowedAttributes: ["id"] }), // `{ .class }` and the rest: read, dropped
  },
};
const used = new Set();
const loading = new Map();

function loadPlugin(name) {
  if (!loading.has(name)) {
    loading.set(
      name,
      PLUGINS[name].load().then(() => {
        PLUGINS[name].use();
        used.add(name);
      }),
    );
  }
  return loading.get(name);
}

/** The extensions a text needs that are not here yet. */
const wanted = (markdown) => Object.keys(PLUGINS).filter((name) => !used.has(name) && PLUGINS[name].hint.test(markdown));

/** Loads the extensions `names` (renderPage's `plugins`) and calls `ready` once they are here, so
 * the text is drawn again with them (at once without them, as code is drawn before its colours). */
export function usePlugins(names, ready) {
  const key = names.join(" ");
  useEffect(() => {
    if (!key) return undefined;
    let live = true;
    Promise.allSettled(key.split(" ").map(loadPlugin)).then(() => live && ready());
    return () => {
      live = false;
    };
  }, [key]);
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const BLOCKS = new Set(["p", "ul", "ol", "li", "blockquote", "em", "strong", "s", "thead", "tbody", "tr", "th", "td"]);

/** Raw HTML a page may use, drawn as these elements with no attribute at all. */
const INLINE_HTML = new Set(["small", "kbd", "sub", "sup", "mark", "abbr", "b", "i", "u", "s", "em", "strong", "del", "ins", "code", "q", "cite", "var", "samp", "dfn"]);
const VOID_HTML = new Set(["br", "wbr"]);
/** Wrappers: the tag is dropped, what it wraps is drawn (`<div class="result" markdown>`). */
const WRAPPER_HTML = new Set(["span", "div", "p", "section", "article", "header", "footer", "figure", "figcaption", "center", "details", "summary", "font", "nav", "main", "aside"]);
const TAG = /<!--[\s\S]*?(?:-->|$)|<(\/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)(\/?)>/g;

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

const slugWords = (words) => words.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "");

/** A heading's anchor as a fragment names it (`#Deploy-the-hub`, as GitHub and most wikis
 * write them): the id this renderer gives that heading ("h-" first). */
export function anchor(fragment) {
  let words = fragment;
  try {
    words = decodeURIComponent(fragment);
  } catch {
    // kept as written
  }
  const slugged = slugWords(words);
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

/** An admonition's kind in a word the stylesheet colours (Material for MkDocs' kinds). */
const ADMONITION = {
  note: "note", info: "note", todo: "note", abstract: "note", summary: "note", tldr: "note", seealso: "note",
  tip: "tip", hint: "tip", important: "tip", success: "tip", check: "tip", done: "tip",
  question: "note", help: "note", faq: "note",
  warning: "warning", caution: "warning", attention: "warning",
  failure: "danger", fail: "danger", missing: "danger", danger: "danger", error: "danger", bug: "danger",
  example: "quote", quote: "quote", cite: "quote",
};

/** A title written in quotes (`!!! note "Read this"`) is drawn without them. */
function unquote(children) {
  const out = [...children];
  if (typeof out[0] === "string") out[0] = out[0].replace(/^\s*["']/, "");
  const last = out.length - 1;
  if (typeof out[last] === "string") out[last] = out[last].replace(/["']\s*$/, "");
  return out;
}

const footnoteNumber = (token) => token.meta.id + 1;
const refId = (token) => `fnref-${footnoteNumber(token)}${token.meta.subId > 0 ? "-" + token.meta.subId : ""}`;

function element(token, children, context) {
  switch (token.type) {
    case "admonition_open": {
      const kind = ADMONITION[(token.meta ?? "").toLowerCase()] ?? "note";
      return h("div", { class: `admonition admonition-${kind}`, role: "note" }, children);
    }
    case "admonition_title_open":
      return h("p", { class: "admonition-title" }, unquote(children));
    case "footnote_block_open":
      return h("div", { class: "footnotes" }, h("hr", null), h("ol", null, children));
    case "footnote_open":
      return h("li", { id: `fn-${footnoteNumber(token)}`, tabindex: "-1" }, children);
    case "table_open":
      // a wide table scrolls inside its own box (focusable, so the keyboard scrolls it too)
      return h("div", { class: "table-box", tabindex: "0", role: "group", "aria-label": "Table" }, h("table", null, children));
    default:
      break;
  }
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

/** An <img> written as HTML: its alternative text, as a markdown image is drawn. */
function imageAlt(attributes) {
  const alt = /\balt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(attributes ?? "");
  return h("span", { class: "image-alt" }, `[image: ${alt ? alt[1] ?? alt[2] ?? alt[3] : ""}]`);
}

/** One piece of raw HTML (a tag, a comment): what it is to the renderer. */
function readTag(text) {
  TAG.lastIndex = 0;
  const found = TAG.exec(text);
  if (!found || found.index !== 0 || found[0].length !== text.trim().length) return { kind: "text" };
  if (found[0].startsWith("<!--")) return { kind: "comment" };
  const name = found[2].toLowerCase();
  const closing = found[1] === "/";
  if (VOID_HTML.has(name)) return { kind: "void", name };
  if (name === "img" && !closing) return { kind: "image", attributes: found[3] };
  if (WRAPPER_HTML.has(name)) return { kind: "wrapper" };
  if (INLINE_HTML.has(name)) return { kind: closing ? "close" : found[4] ? "void-ish" : "open", name };
  return { kind: "text" };
}

/** A block of raw HTML: comments hidden, wrappers dropped, allowed inline tags drawn, the rest text.
 * Nothing is left when only comments and wrappers were there. */
function htmlBlock(content) {
  const pieces = [];
  let at = 0;
  TAG.lastIndex = 0;
  for (let found = TAG.exec(content); found; found = TAG.exec(content)) {
    if (found.index > at) pieces.push({ type: "text", content: content.slice(at, found.index) });
    pieces.push({ type: "html_inline", content: found[0] });
    at = found.index + found[0].length;
    TAG.lastIndex = at;
  }
  if (at < content.length) pieces.push({ type: "text", content: content.slice(at) });
  const drawn = build(pieces, { inline: true });
  const visible = drawn.some((piece) => (typeof piece === "string" ? piece.trim() : piece));
  return visible ? h("p", null, drawn) : null;
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
    case "html_block":
      return htmlBlock(token.content);
    case "footnote_ref": {
      const n = footnoteNumber(token);
      return h("sup", { class: "footnote-ref" }, h("a", { href: pageHref(context.from, { at: `fn-${n}` }), id: refId(token), "aria-label": `Footnote ${n}` }, `[${n}]`));
    }
    case "footnote_anchor":
      return [" ", h("a", { href: pageHref(context.from, { at: refId(token) }), class: "footnote-back", "aria-label": `Back to the reference of footnote ${footnoteNumber(token)}` }, "↩")];
    default:
      return token.content || null; // markup this renderer does not draw: its text
  }
}

function build(tokens, context) {
  const stack = [{ children: [] }];
  const closeTo = (frame) => {
    while (stack.length > 1) {
      const top = stack.pop();
      const made = top.html ? h(top.html, null, top.children) : element(top.token, top.children, context);
      stack[stack.length - 1].children.push(made);
      if (top === frame) return;
    }
  };
  for (const token of tokens) {
    const top = stack[stack.length - 1].children;
    if (token.type === "inline") {
      top.push(...build(token.children ?? [], context));
    } else if (token.type === "html_inline") {
      const tag = readTag(token.content);
      if (tag.kind === "open") stack.push({ html: tag.name, children: [] });
      else if (tag.kind === "close") {
        // the nearest open tag of that name inside this markdown span, else the text as written
        let found = null;
        for (let index = stack.length - 1; index > 0 && stack[index].html; index -= 1) {
          if (stack[index].html === tag.name) {
            found = stack[index];
            break;
          }
        }
        if (found) closeTo(found);
        else top.push(token.content);
      } else if (tag.kind === "void") top.push(h(tag.name, null));
      else if (tag.kind === "void-ish") top.push(h(tag.name, null));
      else if (tag.kind === "image") top.push(imageAlt(tag.attributes));
      else if (tag.kind === "text") top.push(token.content);
      // a comment or a wrapper: nothing drawn
    } else if (token.nesting === 1) {
      stack.push({ token, children: [] });
    } else if (token.nesting === -1 && stack.length > 1) {
      // raw HTML left open inside a markdown span ends with it
      while (stack.length > 1 && stack[stack.length - 1].html) closeTo(stack[stack.length - 1]);
      if (stack.length > 1) closeTo(stack[stack.length - 1]);
    } else {
      top.push(leaf(token, context));
    }
  }
  while (stack.length > 1) closeTo(stack[stack.length - 1]);
  return stack[0].children;
}

/** A heading's anchor: its words, lower case, joined by hyphens ("h-" first; unique on the page). */
function slug(text, taken) {
  const base = "h-" + (slugWords(text) || "section");
  let id = base;
  for (let n = 2; taken.has(id); n += 1) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

/** The words a heading reads as: its text and code, never a comment, a tag or a footnote mark. */
const headingText = (children) =>
  (children ?? [])
    .map((child) => (child.type === "text" || child.type === "code_inline" ? child.content : ""))
    .join("")
    .replace(/\s+/g, " ")
    .trim();

/** The page's body as Preact children, its headings (level as written, text, id) for the table of
 * contents, the extensions it needs that are not loaded yet (usePlugins) and the grammars its fenced blocks name (wiki-highlight.js's useGrammars loads them;
 * drawn again once they are here, the blocks are coloured). from: the page's path; known: Map
 * path -> listing row. A heading's attribute list (`## Setup { #install }`) names its anchor. */
export function renderPage(markdown, from, known) {
  const tokens = parser.parse(markdown, {});
  const taken = new Set();
  const headings = [];
  tokens.forEach((token, index) => {
    if (token.type !== "heading_open") return;
    const text = headingText(tokens[index + 1]?.children);
    const own = token.attrGet("id");
    headings.push({ level: Number(token.tag.slice(1)), text, id: slug(own || text, taken) });
  });
  const top = Math.min(...headings.map((entry) => entry.level), 6);
  const context = { from, known, headings, top, last: 3, next: 0, grammars: new Set() };
  return { body: build(tokens, context), headings, grammars: [...context.grammars], plugins: wanted(markdown) };
}

/** The page's body as Preact children. */
export function render(markdown, from, known) {
  return renderPage(markdown, from, known).body;
}

/** A page's title as people name it: frontmatter `title`, else its first `#` heading (its comments
 * and attribute list left out), else its file name. */
export function pageTitle(title, content, path) {
  if (title) return title;
  const first = /^#\s+(.+?)\s*#*\s*$/m.exec(body(content ?? ""));
  const words = first ? first[1].replace(/<!--[\s\S]*?-->/g, "").replace(/\s*\{[^{}]*\}\s*$/, "").trim() : "";
  return words || path.slice(path.lastIndexOf("/") + 1);
}
