// A page's History (every write with who and when, the difference between two kept versions,
// Revert) and the difference view the conflict view draws too. docs/console.md, The wiki.
import { html, useMemo, useState } from "../vendor/preact-htm.module.js";
import { diffWordsWithSpace, structuredPatch } from "../vendor/diff.module.js";
import { Bytes, Id, Loaded, Notice, Problem, When, useAction, useLoad, when } from "../ui.js";
import { get, go, kb, pageUrl, post, short, versionName, versionWho } from "./wiki-common.js";

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

/** History: the versions, and the difference between two of them; the pair shown lives in the
 * address (`mode=history&from=…&to=…`), so Back and a shared link return to it. */
export function History({ project, path, current, query, onReverted }) {
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
        return v ? `${when(v.at)} (${versionWho(v)})` : short(version);
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
            <td data-label="At"><${When} iso=${v.at} /></td><td data-label="Who">${versionWho(v)}</td>
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

