// The knowledge console: sign in, the bar, the sections. No build step: the browser loads these
// modules as shipped. docs/console.md.
import { html, render, useCallback, useEffect, useRef, useState } from "./vendor/preact-htm.module.js";
import * as api from "./api.js";
import { Bar } from "./bar.js";
import { EnableKnowledge } from "./enable.js";
import { screen, screens } from "./registry.js";
import { go, hasMoved, href, markMoved, readRoute, routeProject, settle } from "./route.js";
import "./screens/index.js";
import { Console, Loaded, Problem, connectionState, useLoad, useRoute, when } from "./ui.js";

function SignIn({ sentence, onSignedIn }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await api.signIn(token.trim());
      setToken("");
      markMoved();
      onSignedIn(me);
    } catch (refusal) {
      setToken("");
      setError(refusal);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="signin" id="main">
    <h1>Sign in</h1>
    <p>The knowledge console. Sign in with your principal's token: it is exchanged for a session once and never kept by this page.</p>
    ${sentence && !error ? html`<p class="error" role="alert">${sentence}</p>` : null}
    <${Problem} error=${error} />
    <form onSubmit=${submit}>
      <label>Token<input type="password" name="token" autocomplete="off" required value=${token}
        onInput=${(event) => setToken(event.currentTarget.value)} /></label>
      <button class="primary" type="submit" disabled=${busy}>Sign in</button>
    </form>
  </main>`;
}

/** The project this browser last showed the person (by their name), kept in localStorage: a
 * project id, nothing else. Written only once it is not simply the first of the list. */
const LAST_PROJECT = (me) => `knowledge-console.project.${me.name}`;
function lastProject(me) {
  try {
    return window.localStorage.getItem(LAST_PROJECT(me));
  } catch {
    return null;
  }
}
function rememberProject(me, project, first) {
  try {
    const kept = window.localStorage.getItem(LAST_PROJECT(me));
    if (kept !== project && (kept !== null || project !== first)) window.localStorage.setItem(LAST_PROJECT(me), project);
  } catch {
    // storage refused: the first project opens next time
  }
}

/** The drafts of unsaved wiki edits (screens/wiki-edit.js) go with the session. */
function forgetDrafts() {
  try {
    for (const key of Object.keys(window.localStorage)) {
      if (key.startsWith("knowledge-console.draft.")) window.localStorage.removeItem(key);
    }
  } catch {
    // nothing kept
  }
}

/** The section the address names, or the first one. */
function sectionOf(route) {
  return screens().some((entry) => entry.id === route.id) ? route.id : screens()[0].id;
}

/**
 * A tab goes to its section in the project the address names when it is clicked, not when the
 * tabs were last drawn: a click made while a project pick is still being drawn opens the section in
 * the picked project. (A click that opens a new tab or window follows the link's own address.)
 */
function openSection(event, id, drawnProject) {
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  go(id, {}, routeProject() ?? drawnProject);
}

function Tabs({ active, status, project }) {
  return html`<nav class="tabs" aria-label="Knowledge sections"><ul>
    ${screens().map((entry) => {
      const count = entry.badge && status ? entry.badge(status) : null;
      return html`<li key=${entry.id}><a href=${href(entry.id, {}, project)} aria-current=${entry.id === active ? "page" : null}
        onClick=${(event) => openSection(event, entry.id, project)}>
        ${entry.title}${count ? html` <span class="badge">${count}<span class="visually-hidden"> ${entry.badgeLabel ?? "waiting"}</span></span>` : null}
      </a></li>`;
    })}
  </ul></nav>`;
}

function Section({ id }) {
  const entry = screen(id);
  const module = useLoad(() => entry.load(), [entry.id]);
  const title = useRef(null);
  useEffect(() => {
    document.title = `${entry.title} · Knowledge console`;
    // the new content has the focus (after sign-in, and after each move between sections), unless
    // the section already put it somewhere inside itself
    if (hasMoved() && !title.current?.closest("section")?.contains(document.activeElement)) title.current?.focus();
  }, [entry.id]);
  return html`<section aria-labelledby="section-title">
    <h2 id="section-title" tabindex="-1" ref=${title}>${entry.title}</h2>
    <${Loaded} load=${module} what=${"the " + entry.title + " section"}>
      ${(loaded) => html`<${loaded.default} key=${entry.id} />`}
    <//>
  </section>`;
}

function OffCard({ status }) {
  const state = connectionState(status);
  if (state.key === "working") return null;
  return html`<section class=${"card " + state.key} aria-labelledby="off-title">
    <h2 id="off-title">Knowledge is ${state.word}</h2>
    <p>${status.reason ?? "FORAGER does not answer."}</p>
    <${EnableKnowledge} />
  </section>`;
}

/** A project the address names that the person may not pick: the API's own answer for it (a
 * project without standing is answered as a missing one, 404 not_found), never another project. */
function Unseen({ project, children }) {
  const probe = useLoad(() => api.get("/knowledge/events", { project, limit: 1 }), [project]);
  if (probe.error) {
    return html`<section class="card" aria-labelledby="unseen-title">
      <h2 id="unseen-title" tabindex="-1">Not found</h2>
      <p class="error" role="alert">${probe.error.message}</p>
      <p>Pick a project in the bar.</p>
    </section>`;
  }
  if (probe.loading) return html`<p class="muted" role="status">Reading ${project}…</p>`;
  return children;
}

function Shell({ me, setMe }) {
  const route = useRoute();
  const id = sectionOf(route);
  const consoleDefault = me.organizations.includes(me.installation_organization);
  const first = me.projects[0]?.project ?? "";
  // an address that names no project (signing in at /console/) opens the one this browser last showed
  const [remembered] = useState(() => lastProject(me));
  const pickable = (name) => (name === "" ? consoleDefault : me.projects.some((row) => row.project === name));
  const defaultProject = remembered !== null && pickable(remembered) ? remembered : first;
  const project = route.params.has("project") ? route.params.get("project") : defaultProject;
  const seen = pickable(project);
  useEffect(() => {
    if (seen) rememberProject(me, project, first);
  }, [project, seen]);
  // a pick keeps the section the address names when it is made (a section clicked a moment before
  // may not be drawn yet)
  const setProject = useCallback((next) => go(sectionOf(readRoute()), {}, next), []);
  const status = useLoad(() => api.get("/knowledge/status"), []);
  const bindings = useLoad(() => api.get("/knowledge/project-map"), []);
  // at 360 px the bar and the tabs fold into a Menu (console.css), closed after each move
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [route]);
  useEffect(() => {
    // the address says the section and the project in full, so a copied link names them; never
    // over a newer address (an effect may run after the person has moved on)
    const now = readRoute();
    if (now.id !== route.id || now.params.toString() !== route.params.toString()) return;
    const params = Object.fromEntries([...route.params].filter(([key]) => key !== "project"));
    settle(id, id === route.id ? params : {}, project);
  }, [route]);
  const refresh = useCallback(() => {
    status.reload();
    bindings.reload();
  }, [status.reload, bindings.reload]);
  const signOut = async () => {
    forgetDrafts();
    try {
      await api.signOut();
    } catch {
      // the session is gone either way
    }
    setMe(null, "You signed out.");
  };
  const context = {
    me,
    project,
    setProject,
    seen,
    status: status.data,
    bindings: bindings.data,
    bindingsError: bindings.error,
    refresh,
  };
  const section = screen(id);
  return html`<${Console.Provider} value=${context}>
    <header class="top">
      <a class="skip" href=${href(id, {}, project)} onClick=${skip}>Skip to the main content</a>
      <h1>Knowledge console</h1>
      <span class="who">Signed in as <strong>${me.name}</strong>${me.session?.expires_at ? html`, session until ${when(me.session.expires_at)}` : null}</span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">
      <div class="menu-bar">
        <button type="button" class="menu-toggle" aria-expanded=${menu ? "true" : "false"} aria-controls="navigation"
          onClick=${() => setMenu(!menu)}>Menu</button>
        <span class="where">${section.title}<span class="muted"> · ${project || "Console default"}</span></span>
      </div>
      <div id="navigation" class=${menu ? "navigation open" : "navigation"}>
        ${menu ? html`<p class="who-narrow muted">Signed in as <strong>${me.name}</strong></p>` : null}
        <${Bar} />
        <${Tabs} active=${id} status=${status.data} project=${project} />
      </div>
      <${Problem} error=${status.error} />
      ${status.data && id !== "connection" ? html`<${OffCard} status=${status.data} />` : null}
      ${seen ? html`<${Section} key=${id} id=${id} />` : html`<${Unseen} key=${project} project=${project}><${Section} key=${id} id=${id} /><//>`}
    </main>
  <//>`;
}

/** The skip link: focus to the section's own content (a hash link would change the address). */
function skip(event) {
  event.preventDefault();
  const target = document.getElementById("section-title") ?? document.getElementById("unseen-title");
  target?.focus();
  target?.scrollIntoView({ block: "start" });
}

function App() {
  const [session, setSession] = useState({ me: undefined, sentence: null });
  const setMe = useCallback((me, sentence = null) => setSession({ me, sentence }), []);
  useEffect(() => {
    api.whenSignedOut((error) => setSession({ me: null, sentence: error.message }));
    api.get("/knowledge/me").then(
      (me) => setSession({ me, sentence: null }),
      (error) => setSession({ me: null, sentence: error.status === 401 ? null : error.message }),
    );
  }, []);
  if (session.me === undefined) return html`<main class="loading" id="main"><p role="status">Loading the console…</p></main>`;
  if (session.me === null) return html`<${SignIn} sentence=${session.sentence} onSignedIn=${(me) => setMe(me)} />`;
  return html`<${Shell} me=${session.me} setMe=${setMe} />`;
}

render(html`<${App} />`, document.getElementById("app"));

// The shell and its static assets kept for when the network is gone; never page content (sw.js).
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("sw.js").catch(() => {
    // no worker (a private window, an old browser): the console works the same, online
  });
}
