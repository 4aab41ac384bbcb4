// The knowledge console: sign in, the bar, the sections. No build step: the browser loads these
// modules as shipped. docs/console.md.
import { html, render, useCallback, useEffect, useState } from "./vendor/preact-htm.module.js";
import * as api from "./api.js";
import { Bar } from "./bar.js";
import { EnableKnowledge } from "./enable.js";
import { screen, screens } from "./registry.js";
import "./screens/index.js";
import { Console, Loaded, Problem, connectionState, useLoad, when } from "./ui.js";

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

function currentId() {
  return window.location.hash.replace(/^#\/?/, "").split("?")[0] || screens()[0].id;
}

function Tabs({ active, status }) {
  return html`<nav class="tabs" aria-label="Knowledge sections"><ul>
    ${screens().map((entry) => {
      const count = entry.badge && status ? entry.badge(status) : null;
      return html`<li key=${entry.id}><a href=${"#/" + entry.id} aria-current=${entry.id === active ? "page" : null}>
        ${entry.title}${count ? html` <span class="badge">${count}<span class="visually-hidden"> ${entry.badgeLabel ?? "waiting"}</span></span>` : null}
      </a></li>`;
    })}
  </ul></nav>`;
}

function Section({ id }) {
  const entry = screen(id);
  const module = useLoad(() => entry.load(), [entry.id]);
  useEffect(() => {
    document.title = `${entry.title} · Knowledge console`;
  }, [entry.id]);
  return html`<section aria-labelledby="section-title">
    <h2 id="section-title">${entry.title}</h2>
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

function Shell({ me, setMe }) {
  const [id, setId] = useState(currentId());
  const defaultProject = me.projects[0]?.project ?? "";
  const [project, setProject] = useState(defaultProject);
  const status = useLoad(() => api.get("/knowledge/status"), []);
  const bindings = useLoad(() => api.get("/knowledge/project-map"), []);
  useEffect(() => {
    const follow = () => setId(currentId());
    window.addEventListener("hashchange", follow);
    return () => window.removeEventListener("hashchange", follow);
  }, []);
  const refresh = useCallback(() => {
    status.reload();
    bindings.reload();
  }, [status.reload, bindings.reload]);
  const signOut = async () => {
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
    status: status.data,
    bindings: bindings.data,
    bindingsError: bindings.error,
    refresh,
  };
  return html`<${Console.Provider} value=${context}>
    <a class="skip" href="#main">Skip to the section</a>
    <header class="top">
      <h1>Knowledge console</h1>
      <span class="who">Signed in as <strong>${me.name}</strong>${me.session?.expires_at ? html`, session until ${when(me.session.expires_at)}` : null}</span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">
      <${Bar} />
      <${Tabs} active=${id} status=${status.data} />
      <${Problem} error=${status.error} />
      ${status.data && id !== "connection" ? html`<${OffCard} status=${status.data} />` : null}
      <${Section} key=${id} id=${id} />
    </main>
  <//>`;
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
