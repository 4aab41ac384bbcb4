// The sections of the Knowledge area: each screen is its own module under screens/, named here
// once and loaded when first opened. A new screen is one register() line in screens/index.js.

const entries = [];

/**
 * id: the URL fragment (#/id); title: the tab's name (the spec's word); order: where the tab sits;
 * load: () => import("./screens/<id>.js") whose default export is the screen's component;
 * badge: (status) => a count for the tab, or null.
 */
export function register(entry) {
  if (entries.some((known) => known.id === entry.id)) throw new Error(`screen ${entry.id} registered twice`);
  entries.push(entry);
  entries.sort((a, b) => a.order - b.order);
}

export const screens = () => entries;
export const screen = (id) => entries.find((entry) => entry.id === id) ?? entries[0];
