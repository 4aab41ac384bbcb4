// What every screen shares: the console's context, loading a read, running an act, and the
// API's sentence shown in place (never a blank panel).
import {
  html,
  createContext,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from "./vendor/preact-htm.module.js";

import { go, readRoute, sameRoute, subscribe } from "./route.js";

export const Console = createContext(null);

/** The address as {id, params} (route.js), drawn again on every move. It subscribes as the view
 * is drawn (a layout effect, before the browser can run another task) and reads the address again
 * then, so a move made while the view was being drawn is never lost. */
export function useRoute() {
  const [route, setRoute] = useState(readRoute);
  useLayoutEffect(() => {
    const follow = () =>
      setRoute((shown) => {
        const now = readRoute();
        return sameRoute(shown, now) ? shown : now;
      });
    follow();
    return subscribe(follow);
  }, []);
  return route;
}

/** The address's words for this view (route.js), read again on every move. */
export function useAddress() {
  const route = useRoute();
  return useMemo(() => Object.fromEntries(route.params), [route]);
}
export const useConsole = () => useContext(Console);

/** One word of the address as a view's state: [value, set]; set is a move (Back undoes it). */
export function useAddressed(name, fallback) {
  const address = useAddress();
  const value = address[name] ?? fallback;
  const set = useCallback(
    (next) => {
      const { id, params } = readRoute();
      const rest = Object.fromEntries([...params].filter(([key]) => key !== "project" && key !== name));
      go(id, { ...rest, [name]: next === fallback ? null : next });
    },
    [name, fallback],
  );
  return [value, set];
}

/** A read: {data, error, loading, reload}. Runs again when a dependency changes. */
export function useLoad(read, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((old) => ({ ...old, error: null, loading: true }));
    read().then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error) => current && setState({ data: null, error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** An act: run(fn, done) marks it busy, keeps the API's sentence on refusal, a notice on success. */
export function useAction() {
  const [state, setState] = useState({ busy: false, error: null, notice: null });
  const run = useCallback(async (act, notice) => {
    setState({ busy: true, error: null, notice: null });
    try {
      const answer = await act();
      setState({ busy: false, error: null, notice: typeof notice === "function" ? notice(answer) : notice ?? null });
      return answer;
    } catch (error) {
      setState({ busy: false, error, notice: null });
      return undefined;
    }
  }, []);
  return { ...state, run };
}

export function Problem({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}</p>`;
}

export function Notice({ text }) {
  return html`<p class="notice" role="status">${text ?? ""}</p>`;
}

/** A read's three states: its sentence while loading, the API's sentence on refusal, else children(data). */
export function Loaded({ load, what, children }) {
  if (load.error) return html`<${Problem} error=${load.error} />`;
  if (load.data === null) return html`<p class="muted" role="status">Reading ${what}…</p>`;
  return children(load.data);
}

export const may = (me, permission) => Boolean(me?.permissions?.includes(permission));

/** The project query every project-scoped route takes ("" = the console default). */
export const scoped = (project) => (project ? { project } : {});

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

/** The connection in a word, as the status card and the bar say it. */
export function connectionState(status) {
  if (!status) return { key: "off", word: "unknown" };
  if (!status.enabled) return { key: "off", word: "not configured" };
  if (!status.reachable || !status.usable) return { key: "unreachable", word: "unreachable" };
  return { key: "working", word: "working" };
}

// ------------------------------------------------------------------ values a person reads

/** A byte count for people: "812 bytes", "12.4 KiB", "3.1 MiB" (the exact count on hover, in Bytes). */
export function bytes(count) {
  if (count === null || count === undefined || count === "") return "";
  const n = Number(count);
  if (!Number.isFinite(n)) return String(count);
  if (n < 1024) return `${n} ${n === 1 ? "byte" : "bytes"}`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function Bytes({ count }) {
  if (count === null || count === undefined) return null;
  return html`<span title=${`${Number(count).toLocaleString("en")} bytes`}>${bytes(count)}</span>`;
}

const RELATIVE = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const DAY = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

/** A moment for people: "3 minutes ago" within a week, else "5 Dec 2026"; the UTC time on hover. */
export function ago(iso, now = Date.now()) {
  if (!iso) return "";
  const at = new Date(iso).getTime();
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((at - now) / 1000);
  const size = Math.abs(seconds);
  if (size < 45) return "just now";
  if (size < 3600) return RELATIVE.format(Math.round(seconds / 60) || Math.sign(seconds), "minute");
  if (size < 86400) return RELATIVE.format(Math.round(seconds / 3600), "hour");
  if (size < 7 * 86400) return RELATIVE.format(Math.round(seconds / 86400), "day");
  return DAY.format(new Date(at));
}

export function When({ iso }) {
  if (!iso) return null;
  return html`<time datetime=${iso} title=${when(iso)}>${ago(iso)}</time>`;
}

/** A path that may wrap after each slash, at its folders, never inside a name (a browser does not
 * break a line after "/" by itself: a long path made a 360 px screen 430 px wide). */
export function Path({ text }) {
  const parts = String(text ?? "").split("/");
  return html`<span class="path">${parts.map((part, index) => (index < parts.length - 1 ? html`${part}/<wbr />` : part))}</span>`;
}

/** A long id or digest shortened (the whole value on hover and to assistive technology), with a
 * button that copies the whole value. */
export function Id({ value, label }) {
  const [copied, setCopied] = useState(false);
  if (!value) return null;
  const text = String(value);
  const digest = /^(sha256:)?[0-9a-f]{40,}$/i.test(text);
  const shown = digest ? text.replace(/^sha256:/i, "").slice(0, 12) + "…" : text.length > 16 ? text.slice(0, 14) + "…" : text;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      setCopied(false);
    }
  };
  return html`<span class="id"><code title=${text} data-value=${text}>${shown}</code>${shown === text
    ? null
    : html`<button type="button" class="copy" onClick=${copy} aria-label=${"Copy " + (label ?? text)}>${copied ? "Copied" : "Copy"}</button>`}</span>`;
}

// ------------------------------------------------------------------ a table that reads

/**
 * A table people can sort, filter and page. columns: [{key, label, cell(row), value(row)?, sort?: false}];
 * value is what sorting and the filter read (cell's text otherwise cannot be known). Filter and
 * paging appear only where the rows are many. The sort, the filter and the page are this view's
 * own.
 */
export function Table({ caption, columns, rows, rowKey, pageSize = 50, filterAt = 12 }) {
  const [sort, setSort] = useState({ key: null, down: false });
  const [filter, setFilter] = useState("");
  const [page, setPage] = useState(0);
  const valueOf = (column, row) => {
    const value = column.value ? column.value(row) : row[column.key];
    return value === null || value === undefined ? "" : value;
  };
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const kept = words.length
    ? rows.filter((row) => {
        const text = columns.map((column) => String(valueOf(column, row))).join(" ").toLowerCase();
        return words.every((word) => text.includes(word));
      })
    : rows;
  const column = columns.find((entry) => entry.key === sort.key);
  const sorted = column
    ? [...kept].sort((a, b) => {
        const x = valueOf(column, a);
        const y = valueOf(column, b);
        const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "en", { numeric: true });
        return sort.down ? -order : order;
      })
    : kept;
  const pages = Math.max(1, Math.ceil(sorted.length / pageSize));
  const at = Math.min(page, pages - 1);
  const shown = sorted.slice(at * pageSize, (at + 1) * pageSize);
  const by = (key) => {
    setSort(sort.key === key ? { key, down: !sort.down } : { key, down: false });
    setPage(0);
  };
  return html`<div class="table">
    ${rows.length >= filterAt
      ? html`<div class="row table-tools">
          <label>Filter rows<input type="search" value=${filter} onInput=${(event) => {
            setFilter(event.currentTarget.value);
            setPage(0);
          }} /></label>
          <p class="muted" role="status">${words.length ? `${kept.length} of ${rows.length} rows` : `${rows.length} rows`}</p>
        </div>`
      : null}
    <table>
      <caption class="visually-hidden">${caption}</caption>
      <thead><tr>${columns.map((entry) =>
        entry.sort === false
          ? html`<th scope="col" key=${entry.key}>${entry.hideLabel ? html`<span class="visually-hidden">${entry.label}</span>` : entry.label}</th>`
          : html`<th scope="col" key=${entry.key} aria-sort=${sort.key === entry.key ? (sort.down ? "descending" : "ascending") : null}>
              <button type="button" class="sort" onClick=${() => by(entry.key)}>${entry.label}<span aria-hidden="true" class="sort-mark">${sort.key === entry.key ? (sort.down ? " ▼" : " ▲") : ""}</span></button></th>`,
      )}</tr></thead>
      <tbody>${shown.map((row, index) => html`<tr key=${rowKey ? rowKey(row) : index}>${columns.map(
        (entry) => html`<td key=${entry.key} data-label=${entry.hideLabel ? null : entry.label} class=${entry.className ?? null}>${entry.cell ? entry.cell(row) : valueOf(entry, row)}</td>`,
      )}</tr>`)}</tbody>
    </table>
    ${pages > 1
      ? html`<nav class="row pager" aria-label=${"Pages of " + caption}>
          <button type="button" disabled=${at === 0} onClick=${() => setPage(at - 1)}>Previous rows</button>
          <span>Rows ${at * pageSize + 1}–${Math.min(sorted.length, (at + 1) * pageSize)} of ${sorted.length}</span>
          <button type="button" disabled=${at >= pages - 1} onClick=${() => setPage(at + 1)}>Next rows</button>
        </nav>`
      : null}
  </div>`;
}

// ------------------------------------------------------------------ a dangerous act asks

/**
 * A button for an act that cannot be taken back: pressed, it asks in place, naming what will
 * happen (`question`), with the act (`yes`) and **Cancel**; the focus goes to the question's
 * Cancel, so Enter pressed twice never acts. `label` names the button (its text is `text`).
 */
export function Confirm({ text, label, question, yes, onConfirm, disabled }) {
  const [asking, setAsking] = useState(false);
  const keep = useRef(null);
  const opener = useRef(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) keep.current?.focus();
    else if (wasAsking.current) opener.current?.focus();
    wasAsking.current = asking;
  }, [asking]);
  if (!asking) {
    return html`<button type="button" class="danger" ref=${opener} aria-label=${label ?? null} disabled=${disabled}
      onClick=${() => setAsking(true)}>${text}</button>`;
  }
  return html`<div class="confirm" role="group" aria-label=${"Confirm: " + (label ?? text)}>
    <p>${question}</p>
    <div class="row">
      <button type="button" class="danger" disabled=${disabled} onClick=${() => {
        wasAsking.current = false;
        setAsking(false);
        onConfirm();
      }}>${yes}</button>
      <button type="button" ref=${keep} onClick=${() => setAsking(false)}>Cancel</button>
    </div>
  </div>`;
}
