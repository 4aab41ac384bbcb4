// Search: statements searched with FORAGER's facets and filters, Retrieve with evidence and the
// rendered context shown verbatim, and an item with its evidence.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Id, Loaded, Path, Problem, scoped, useAction, useAddress, useConsole, useLoad } from "../ui.js";
import * as route from "../route.js";

const FILTERS = [
  ["type", "Type"],
  ["status", "Status"],
  ["support", "Support"],
  ["review_status", "Review"],
];

function Item({ id, close }) {
  const { project } = useConsole();
  const item = useLoad(() => api.get(`/knowledge/items/${encodeURIComponent(id)}`, scoped(project)), [id, project]);
  const evidence = useLoad(() => api.get(`/knowledge/items/${encodeURIComponent(id)}/evidence`, scoped(project)), [id, project]);
  const panel = useRef(null);
  useEffect(() => panel.current?.focus(), [id]);
  return html`<section class="card" aria-labelledby="item-title" tabindex="-1" ref=${panel}>
    <h3 id="item-title">Item: ${item.data?.statement ?? id}</h3>
    <${Loaded} load=${item} what="the item">
      ${(found) => html`<p class="muted">Id <${Id} value=${id} label=${"the item's id"} /></p>
        <dl class="facts">
          <dt>Type</dt><dd>${found.type}</dd>
          <dt>Support</dt><dd>${found.support} · confidence ${found.confidence}</dd>
          <dt>Status</dt><dd>${found.status}${found.contested ? " · contested" : ""}</dd>
          <dt>Review</dt><dd>${found.review_status}${found.reviewed_by ? ` by ${found.reviewed_by}` : ""}</dd>
        </dl>`}
    <//>
    <h4>Evidence</h4>
    <${Loaded} load=${evidence} what="the evidence">
      ${(answer) =>
        answer.evidence.length === 0
          ? html`<p>No evidence links.</p>`
          : html`<ul>${answer.evidence.map(
              (link) => html`<li key=${link.evidence_id}><strong>${link.source_id
                ? html`<a href=${route.href("sources", { source: link.source_id })}><${Path} text=${link.source_name} /></a>`
                : html`<${Path} text=${link.source_name} />`}</strong>${link.location ? ` (${link.location})` : ""}:
                ${link.missing_excerpt ? html`<em>the excerpt is missing</em>` : html`<q>${link.excerpt}</q>`}
                ${!link.missing_excerpt && link.source_id && link.char_start != null ? html`<${InContext} link=${link} />` : null}</li>`,
            )}</ul>`}
    <//>
    <button type="button" onClick=${close}>Close the item</button>
  </section>`;
}

const CONTEXT_CHARS = 240;

// The excerpt where it stands in its source's text: the words before and after, the excerpt marked.
function InContext({ link }) {
  const { project } = useConsole();
  const [shown, setShown] = useState(false);
  const page = useLoad(
    () => (shown ? api.get(`/knowledge/sources/${encodeURIComponent(link.source_id)}`, scoped(project)) : Promise.resolve(null)),
    [project, link.source_id, shown],
  );
  return html`<details onToggle=${(event) => setShown(event.currentTarget.open)}>
    <summary>In context</summary>
    ${shown
      ? html`<${Loaded} load=${page} what="the source's text">
          ${(found) => {
            const text = found?.text ?? "";
            const before = text.slice(Math.max(0, link.char_start - CONTEXT_CHARS), link.char_start);
            const after = text.slice(link.char_end, link.char_end + CONTEXT_CHARS);
            return html`<p class="in-context">…${before}<mark>${text.slice(link.char_start, link.char_end)}</mark>${after}…</p>`;
          }}
        <//>`
      : null}
  </details>`;
}

const KEYS = ["q", ...FILTERS.map(([key]) => key)];
const PAGE_SIZE = 25;
const SEARCH_MOST = 50; // GET /knowledge/search answers at most 50, best first

/** FORAGER's enum name as its filter word: `DirectFact` -> `direct_fact` (a word stays itself). */
const wireWord = (name) => String(name ?? "").replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();

/** Every statement the filters leave (GET /knowledge/statements, 100 a page): their ids and facets. */
async function filtered(project, filters) {
  const ids = new Set();
  let facets = {};
  for (let page = 1; page <= 50; page += 1) {
    const answer = await api.get("/knowledge/statements", { ...scoped(project), ...filters, page, page_size: 100 });
    if (page === 1) facets = answer.facets ?? {};
    for (const item of answer.items) ids.add(item.knowledge_id);
    if (page * 100 >= answer.total || answer.items.length === 0) break;
  }
  return { ids, facets };
}

/**
 * The statements asked for. With words, the API's search ranks them (every word counts, not one
 * phrase; its 50 best, best first), the filters kept by the statements route's own filtering;
 * without, the statements route lists what the filters leave. Either way {rows, total, capped,
 * facets}, a page of 25 drawn at a time.
 */
async function statementsFor(project, asked, page) {
  const filters = Object.fromEntries(FILTERS.map(([key]) => [key, asked[key]]).filter(([, value]) => value));
  const words = (asked.q ?? "").trim();
  if (!words) {
    const answer = await api.get("/knowledge/statements", { ...scoped(project), ...filters, page, page_size: PAGE_SIZE });
    return { rows: answer.items, total: answer.total, capped: false, facets: answer.facets ?? {}, paged: true };
  }
  const [found, kept] = await Promise.all([
    api.get("/knowledge/search", { ...scoped(project), q: words, limit: SEARCH_MOST }),
    Object.keys(filters).length ? filtered(project, filters) : Promise.resolve(null),
  ]);
  const rows = kept ? found.hits.filter((hit) => kept.ids.has(hit.knowledge_id)) : found.hits;
  const facets = {};
  for (const key of ["type", "status", "support"]) {
    facets[key] = {};
    for (const row of rows) facets[key][wireWord(row[key])] = (facets[key][wireWord(row[key])] ?? 0) + 1;
  }
  if (kept) facets.review_status = kept.facets.review_status ?? {};
  return { rows, total: rows.length, capped: found.hits.length >= SEARCH_MOST, facets, paged: false };
}

/** Statements: the words and filters asked, and the page shown, live in the address
 * (`find=1&q=…&type=…&page=2`), so Back, a reload and a shared link show the same statements. */
function Statements({ open }) {
  const { project } = useConsole();
  const address = useAddress();
  const asked = address.find ? Object.fromEntries(KEYS.map((key) => [key, address[key] ?? ""])) : null;
  const page = Math.max(1, Number(address.page) || 1);
  const askedKey = JSON.stringify(asked);
  const [query, setQuery] = useState(() => asked ?? Object.fromEntries(KEYS.map((key) => [key, ""])));
  const [facets, setFacets] = useState({});
  const found = useLoad(
    () =>
      asked === null
        ? Promise.resolve(null)
        : statementsFor(project, asked, page).then((answer) => {
            setFacets(answer.facets);
            return answer;
          }),
    // words: one search, paged here; no words: the route pages
    [project, askedKey, asked?.q?.trim() ? 0 : page],
  );
  const show = (words, at) => {
    const next = route.href("search", { find: 1, ...words, page: at > 1 ? at : null, item: address.item });
    if (window.location.hash === next) found.reload();
    else window.location.hash = next;
  };
  const submit = (event) => {
    event.preventDefault();
    show(query, 1);
  };
  const set = (key) => (event) => setQuery({ ...query, [key]: event.currentTarget.value });
  return html`<section class="card" aria-labelledby="search-title">
    <h3 id="search-title">Statements</h3>
    <form onSubmit=${submit} role="search" aria-label="Search statements">
      <label>Words<input type="search" value=${query.q} onInput=${set("q")} /></label>
      ${FILTERS.map(
        ([key, label]) => html`<label>${label}<select value=${query[key]} onChange=${set(key)}>
          <option value="">any</option>
          ${Object.entries(facets[key] ?? {}).map(([value, count]) => html`<option value=${value}>${value} (${count})</option>`)}
          ${query[key] && !(facets[key] ?? {})[query[key]] ? html`<option value=${query[key]}>${query[key]}</option>` : null}
        </select></label>`,
      )}
      <button type="submit" class="primary">Search</button>
    </form>
    ${asked === null
      ? html`<p class="muted">Words are searched as words, each on its own, best matches first; the filters narrow them.</p>`
      : html`<${Loaded} load=${found} what="the statements">
          ${(answer) => {
            if (answer === null) return null;
            const pages = Math.max(1, Math.ceil(answer.total / PAGE_SIZE));
            const at = Math.min(page, pages);
            const rows = answer.paged ? answer.rows : answer.rows.slice((at - 1) * PAGE_SIZE, at * PAGE_SIZE);
            const first = (at - 1) * PAGE_SIZE + 1;
            return html`<p role="status">${answer.total} statements match.${answer.capped ? ` The search answers its ${SEARCH_MOST} best: add a word or a filter to narrow them.` : ""}</p>
              ${rows.length
                ? html`<table>
                    <caption class="visually-hidden">Statements ${first}–${first + rows.length - 1} of ${answer.total}${asked.q ? ", best first" : ""}</caption>
                    <thead><tr><th scope="col">Statement</th><th scope="col">Type</th><th scope="col">Support</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Open</span></th></tr></thead>
                    <tbody>${rows.map(
                      (row) => html`<tr key=${row.knowledge_id}>
                        <td data-label="Statement">${row.statement}</td>
                        <td data-label="Type">${row.type}</td>
                        <td data-label="Support">${row.support}</td>
                        <td data-label="Status">${row.status}</td>
                        <td><button type="button" aria-label=${"Open " + row.knowledge_id} onClick=${() => open(row.knowledge_id)}>Open</button></td>
                      </tr>`,
                    )}</tbody>
                  </table>`
                : null}
              ${pages > 1
                ? html`<nav class="row pager" aria-label="Pages of statements">
                    <button type="button" disabled=${at <= 1} onClick=${() => show(asked, at - 1)}>Previous statements</button>
                    <span>Statements ${first}–${first + rows.length - 1} of ${answer.total}</span>
                    <button type="button" disabled=${at >= pages} onClick=${() => show(asked, at + 1)}>Next statements</button>
                  </nav>`
                : null}`;
          }}
        <//>`}
  </section>`;
}

function Retrieve({ open }) {
  const { project } = useConsole();
  const [query, setQuery] = useState("");
  const act = useAction();
  const [answer, setAnswer] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    const found = await act.run(() => api.post("/knowledge/retrieve", { query, top_k: 8 }, scoped(project)));
    if (found) setAnswer(found);
  };
  return html`<section class="card" aria-labelledby="retrieve-title">
    <h3 id="retrieve-title">Retrieve</h3>
    <form onSubmit=${submit}>
      <label>Question<input required value=${query} onInput=${(event) => setQuery(event.currentTarget.value)} /></label>
      <button type="submit" disabled=${act.busy}>Retrieve</button>
    </form>
    <${Problem} error=${act.error} />
    ${answer
      ? html`<ul>${answer.items.map(
          (item) => html`<li key=${item.knowledge_id}>${item.statement}
            <button type="button" aria-label=${"Open " + item.knowledge_id} onClick=${() => open(item.knowledge_id)}>Open</button></li>`,
        )}</ul>
        ${answer.conflicts.length ? html`<p>${answer.conflicts.length} conflicts bear on this.</p>` : null}
        <h4>The context as a model is given it</h4>
        <pre aria-label="Rendered context">${answer.rendered}</pre>`
      : null}
  </section>`;
}

export default function Search() {
  const address = useAddress();
  const item = address.item ?? null;
  // the item open is in the address too: Back closes it, a link shares it
  const setItem = (id) => route.go("search", { ...address, project: undefined, item: id });
  return html`
    ${item ? html`<${Item} key=${item} id=${item} close=${() => setItem(null)} />` : null}
    <${Statements} open=${setItem} />
    <${Retrieve} open=${setItem} />
  `;
}
