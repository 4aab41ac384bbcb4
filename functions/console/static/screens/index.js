// One line a section. Keep each screen in its own module.
import { register } from "../registry.js";

register({ id: "connection", title: "Connection", order: 10, load: () => import("./connection.js") });
register({ id: "modules", title: "Modules", order: 20, load: () => import("./modules.js") });
register({ id: "search", title: "Search", order: 30, load: () => import("./search.js") });
register({ id: "wiki", title: "Wiki", order: 35, load: () => import("./wiki.js") });
register({ id: "curation", title: "Curation", order: 40, load: () => import("./curation.js") });
register({ id: "sources", title: "Sources", order: 50, load: () => import("./sources.js") });
register({ id: "exports", title: "Exports", order: 55, load: () => import("./exports.js") });
register({ id: "published", title: "What FORAGER has published", order: 60, load: () => import("./feed.js") });
register({ id: "events", title: "Event log", order: 90, load: () => import("./events.js") });
register({
  id: "changes",
  title: "Knowledge changes",
  order: 70,
  load: () => import("./changes.js"),
  badge: (status) => status.open_changes || null,
  badgeLabel: "open changes",
});
register({
  id: "dead-letters",
  title: "Dead letters",
  order: 80,
  load: () => import("./deadletters.js"),
  badge: (status) => status.dead_letters?.unresolved || null,
  badgeLabel: "dead letters waiting",
});
