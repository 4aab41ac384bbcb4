// The address is the state: `#/<section>?project=<id>&<the section's own words>`. The section, the
// project (`project=` empty: the console default), a wiki page, its version, search words and
// filters all live here, so reload, Back/Forward, a new session and a shared link land on the same
// view. Every change of view is a new history entry (location.hash); nothing else holds it.
// docs/console.md, Addresses.

/** The address as {id, params}: id is the section ("" when none is named). */
export function readRoute() {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const at = hash.indexOf("?");
  const id = at < 0 ? hash : hash.slice(0, at);
  return { id, params: new URLSearchParams(at < 0 ? "" : hash.slice(at + 1)) };
}

/** The project the address names: a string ("" = the console default), or null when it names none. */
export function routeProject() {
  const { params } = readRoute();
  return params.has("project") ? params.get("project") : null;
}

/** The address of a section's view in a project (the current project unless one is given). */
export function href(id, params = {}, project = routeProject()) {
  const query = new URLSearchParams();
  if (project !== null && project !== undefined) query.set("project", project);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  return "#/" + id + (text ? "?" + text : "");
}

/** Go to a view: a new history entry, so Back returns to where the person was. */
export function go(id, params = {}, project = routeProject()) {
  const next = href(id, params, project);
  if (window.location.hash !== next) window.location.hash = next;
}

/** The same view, said fully (the project named), without a new history entry. */
export function settle(id, params, project) {
  const next = href(id, params, project);
  if (window.location.hash !== next) window.history.replaceState(window.history.state, "", next);
  shown = window.location.hash;
}

/** Whether two addresses name the same view. */
export const sameRoute = (a, b) => a.id === b.id && a.params.toString() === b.params.toString();

// One listener for the whole console, attached when this module loads, before anything is drawn:
// a view subscribes to it (ui.js's useRoute) and reads the address again as it does, so a change
// made between a view's drawing and its subscription is never missed.
const subscribers = new Set();
/** Call `follow` after every change of address; returns the unsubscribe. */
export function subscribe(follow) {
  subscribers.add(follow);
  return () => subscribers.delete(follow);
}

// A view holding unsaved work (the wiki's editor) holds the address: a move away from it — a link,
// a tab, Back or Forward — is undone at once, before any view hears of it, and handed to the
// holder, which asks the person; `proceed` then makes the move. Each history entry the console
// makes is numbered (history.state), so Back and Forward are undone by the distance they went.
const AT = "consoleEntry";
let holder = null;
let entry = typeof window.history.state?.[AT] === "number" ? window.history.state[AT] : 0;
let shown = window.location.hash;
let undoing = null; // the address a move being undone returns to
if (typeof window.history.state?.[AT] !== "number") {
  window.history.replaceState({ ...(window.history.state ?? {}), [AT]: entry }, "");
}

/** While `ask` holds the address, a move calls ask({hash, delta}) instead of happening; returns
 * the release. */
export function hold(ask) {
  holder = ask;
  return () => {
    if (holder === ask) holder = null;
  };
}

/** Make a move the holder was asked about (it lets go of the address first). */
export function proceed(move) {
  holder = null;
  if (move.delta) window.history.go(move.delta);
  else window.location.hash = move.hash;
}

// Focus follows the person's own moves (a new address, signing in), never a page's first load:
// a reload leaves the focus where the browser puts it, so the skip link is the first Tab stop.
let moved = false;
window.addEventListener("hashchange", () => {
  const next = window.location.hash;
  const arrived = window.history.state?.[AT];
  if (undoing !== null) {
    const back = next === undoing;
    undoing = null;
    if (back) return; // the undone move's way back: nothing moved
  }
  if (holder && next !== shown) {
    const delta = typeof arrived === "number" ? arrived - entry : 0;
    undoing = shown;
    if (delta) window.history.go(-delta); // Back or Forward: as far the other way
    else window.history.back(); // a new entry (a link, a tab): back to the held one
    holder({ hash: next, delta });
    return;
  }
  if (typeof arrived === "number") entry = arrived;
  else {
    entry += 1;
    window.history.replaceState({ ...(window.history.state ?? {}), [AT]: entry }, "");
  }
  shown = next;
  moved = true;
  for (const follow of [...subscribers]) follow();
});
/** Whether the person has moved since the page loaded (then new content takes the focus). */
export const hasMoved = () => moved;
/** Signing in is a move too. */
export const markMoved = () => {
  moved = true;
};
