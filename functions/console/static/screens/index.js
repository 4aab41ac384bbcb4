// One line a section. Keep each screen in its own module.
import { register } from "../registry.js";

register({ id: "connection", title: "Connection", order: 10, load: () => import("./connection.js") });
register({ id: "modules", title: "Modules", order: 20, load: () => import("./modules.js") });
register({ id: "events", title: "Event log", order: 90, load: () => import("./events.js") });
