// Code highlighting in the wiki: a fenced block whose first word names a language (```python) is
// drawn with its words coloured. Prism (vendored, prismjs) only tokenizes: its tokens become Preact
// elements here, a <span> a token with the token's kind as its class, never an HTML string, so
// code stays text whatever it holds. Prism's core comes with the wiki; a language's grammar only
// when a page shows a block in it, found in a fixed table (a page's words never name a file).
// docs/console.md, The wiki.
import "./wiki-highlight-manual.js"; // before Prism's core runs: it must not highlight on its own
import "../vendor/prism-core.min.js";
import { h, useEffect } from "../vendor/preact-htm.module.js";

const Prism = globalThis.Prism;

/** A fence's language word (lower case) -> the grammar's file, prism-<name>.min.js. */
const GRAMMARS = {
  python: "python", py: "python",
  javascript: "javascript", js: "javascript", mjs: "javascript", jsx: "javascript",
  typescript: "typescript", ts: "typescript",
  bash: "bash", sh: "bash", shell: "bash", zsh: "bash", console: "bash",
  json: "json",
  yaml: "yaml", yml: "yaml",
  toml: "toml",
  ini: "ini", cfg: "ini", conf: "ini",
  sql: "sql",
  go: "go", golang: "go",
  rust: "rust", rs: "rust",
  java: "java",
  c: "c", h: "c",
  cpp: "cpp", "c++": "cpp", cc: "cpp", hpp: "cpp",
  diff: "diff", patch: "diff",
  docker: "docker", dockerfile: "docker",
  css: "css",
  html: "markup", xml: "markup", svg: "markup", markup: "markup",
  markdown: "markdown", md: "markdown",
};
/** What a grammar builds on, loaded before it (Prism's components.json: require, and optional). */
const BUILDS_ON = {
  javascript: ["clike"],
  typescript: ["clike", "javascript"],
  go: ["clike"],
  java: ["clike"],
  c: ["clike"],
  cpp: ["clike", "c"],
  markdown: ["markup", "yaml"],
};

const loading = new Map();

function load(name) {
  if (!loading.has(name)) {
    loading.set(
      name,
      (async () => {
        for (const base of BUILDS_ON[name] ?? []) await load(base);
        await import(`../vendor/prism-${name}.min.js`);
      })(),
    );
  }
  return loading.get(name);
}

/** The grammar a fence's info string names ("python", "py title=x"), or null. */
export function grammarOf(info) {
  const word = (info ?? "").trim().split(/\s+/)[0].toLowerCase();
  return Object.hasOwn(GRAMMARS, word) ? GRAMMARS[word] : null;
}

const loaded = (names) => names.every((name) => Prism.languages[name]);

/**
 * Loads the grammars `names` (from grammarOf, as renderPage returns them) and calls `ready` once
 * they are here: a page is drawn at once with its code as plain text, and again, coloured, when
 * `ready` redraws it. A grammar that cannot be fetched leaves its code plain.
 */
export function useGrammars(names, ready) {
  const key = [...new Set(names)].sort().join(" ");
  useEffect(() => {
    const wanted = key ? key.split(" ") : [];
    if (loaded(wanted)) return undefined;
    let live = true;
    Promise.allSettled(wanted.map(load)).then(() => live && ready());
    return () => {
      live = false;
    };
  }, [key]);
}

function draw(stream) {
  if (typeof stream === "string") return stream;
  if (Array.isArray(stream)) return stream.map(draw);
  const kinds = [stream.type, ...[].concat(stream.alias ?? [])].filter((kind) => /^[a-z][a-z0-9-]*$/.test(kind));
  return h("span", { class: kinds.map((kind) => "tok-" + kind).join(" ") }, draw(stream.content));
}

/** The code as Preact children, coloured when its grammar is here; null when it is not. */
export function highlight(code, name) {
  const grammar = name ? Prism.languages[name] : null;
  if (!grammar) return null;
  return draw(Prism.tokenize(code, grammar));
}
