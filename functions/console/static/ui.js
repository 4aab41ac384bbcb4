// What every screen shares: the console's context, loading a read, running an act, and the
// API's sentence shown in place (never a blank panel).
import { html, createContext, useCallback, useContext, useEffect, useState } from "./vendor/preact-htm.module.js";

import { go, readRoute } from "./route.js";

export const Console = createContext(null);

/** The address's words for this view (route.js), read again on every move. */
export function useAddress() {
  const [params, setParams] = useState(() => Object.fromEntries(readRoute().params));
  useEffect(() => {
    const follow = () => setParams(Object.fromEntries(readRoute().params));
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  return params;
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
