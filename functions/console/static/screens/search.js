// Search: statements searched with FORAGER's facets and filters, Retrieve with evidence and the
// rendered context shown verbatim, and an item with its evidence.
import { html, useEffect, useRef, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Id, Loaded, Problem, scoped, useAction, useAddress, useConsole, useLoad } from "../ui.js";
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
              (link) => html`<li key=${link.evidence_id}><strong>${link.source_name}</strong>${link.location ? ` (${link.location})` : ""}:
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

/** Statements: the words and filters asked live in the address (`find=1&q=…&type=…`), so Back,
 * a reload and a shared link show the same statements. */
function Statements({ open }) {
  const { project } = useConsole();
  const address = useAddress();
  const asked = address.find ? Object.fromEntries(KEYS.map((key) => [key, address[key] ?? ""])) : null;
  const askedKey = JSON.stringify(asked);
  const [query, setQuery] = useState(() => asked ?? Object.fromEntries(KEYS.map((key) => [key, ""])));
  const [facets, setFacets] = useState({});
  const page = useLoad(
    () =>
      asked === null
        ? Promise.resolve(null)
        : api.get("/knowledge/statements", { ...scoped(project), ...Object.fromEntries(Object.entries(asked).filter(([, v]) => v)) }).then(
            (answer) => {
              setFacets(answer.facets ?? {});
              return answer;
            },
          ),
    [project, askedKey],
  );
  const submit = (event) => {
    event.preventDefault();
    const next = route.href("search", { find: 1, ...query, item: address.item });
    if (window.location.hash === next) page.reload();
    else window.location.hash = next;
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
      ? null
      : html`<${Loaded} load=${page} what="the statements">
          ${(answer) =>
            answer === null
              ? null
              : html`<p role="status">${answer.total} statements match.</p>
                ${answer.items.length
                  ? html`<table>
                      <thead><tr><th scope="col">Statement</th><th scope="col">Type</th><th scope="col">Support</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Open</span></th></tr></thead>
                      <tbody>${answer.items.map(
                        (row) => html`<tr key=${row.knowledge_id}>
                          <td data-label="Statement">${row.statement}</td>
                          <td data-label="Type">${row.type}</td>
                          <td data-label="Support">${row.support}</td>
                          <td data-label="Status">${row.status}</td>
                          <td><button type="button" aria-label=${"Open " + row.knowledge_id} onClick=${() => open(row.knowledge_id)}>Open</button></td>
                        </tr>`,
                      )}</tbody>
                    </table>`
                  : null}`}
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
