// Editing a page (Edit and Save, the conflict view and Merge by hand, the preview beside the
// text) and New page. Nothing typed is lost without a word: while the text differs from what was
// saved it is kept as a draft in this browser (offered again when the page is opened, after a
// reload too), a move away (a link, a tab, Back, Forward) asks first in place, and leaving the
// document asks through the browser (`beforeunload`). docs/console.md, The wiki.
import { html, useEffect, useMemo, useRef, useState } from "../vendor/preact-htm.module.js";
import { diffLines } from "../vendor/diff.module.js";
import { Problem, When, useAction, ago } from "../ui.js";
import * as route from "../route.js";
import { call, get, isEscape, pageUrl, short, who } from "./wiki-common.js";
import { useGrammars } from "./wiki-highlight.js";
import { Difference } from "./wiki-history.js";
import { body, pageHref, renderPage, usePlugins } from "./wiki-markdown.js";

const NEW_PAGE = "---\ntype: Note\ntitle: \nstatus: draft\ntags: []\n---\n# \n";

// ------------------------------------------------------------------ drafts

/** Drafts live in this browser's localStorage, one a page: {text, base (the version it began on),
 * at}. Written as the person types, gone when it is saved or discarded (and at Sign out). */
export const DRAFTS = "knowledge-console.draft.";
const draftKey = (project, path) => `${DRAFTS}${project}:${path}`;

export function readDraft(project, path) {
  try {
    const kept = JSON.parse(window.localStorage.getItem(draftKey(project, path)) ?? "null");
    return kept && typeof kept.text === "string" ? kept : null;
  } catch {
    return null;
  }
}

function keepDraft(project, path, text, base) {
  try {
    window.localStorage.setItem(draftKey(project, path), JSON.stringify({ text, base, at: new Date().toISOString() }));
  } catch {
    // storage refused (a private window, full): the guard still asks before anything is lost
  }
}

export function dropDraft(project, path) {
  try {
    window.localStorage.removeItem(draftKey(project, path));
  } catch {
    // nothing kept
  }
}

// ------------------------------------------------------------------ the guard

/**
 * While `dirty`, a move away is asked about in place (route.js's hold) and leaving the document
 * through the browser (`beforeunload`). Returns [asking, ask, settle]: `asking` is the pending
 * move ({hash, delta}) or {close: true}; `ask(what)` asks about closing; `settle(leave)` answers:
 * false stays, true makes the move (or calls `onClose`).
 */
function useLeaveGuard(dirty, onClose) {
  const [asking, setAsking] = useState(null);
  useEffect(() => {
    if (!dirty) return undefined;
    const release = route.hold((move) => setAsking(move));
    const unload = (event) => {
      event.preventDefault();
      event.returnValue = ""; // the browser asks in its own words
    };
    window.addEventListener("beforeunload", unload);
    return () => {
      release();
      window.removeEventListener("beforeunload", unload);
    };
  }, [dirty]);
  const settle = (leave) => {
    const move = asking;
    setAsking(null);
    if (!leave || !move) return;
    if (move.close) onClose();
    else route.proceed(move);
  };
  return [asking, (what) => setAsking(what), settle];
}

/** The question, in place above the editor: the focus on **Keep editing**, so Enter or Escape
 * keeps the text. */
function LeavePrompt({ closing, drafts, onStay, onLeave, onDiscard }) {
  const stay = useRef(null);
  useEffect(() => {
    stay.current?.focus();
    stay.current?.scrollIntoView({ block: "center" });
  }, []);
  const escape = (event) => {
    if (isEscape(event)) {
      event.preventDefault();
      event.stopPropagation();
      onStay();
    }
  };
  const where = closing ? "Close the editor" : "Leave this page";
  return html`<div class="card leave" role="alertdialog" aria-labelledby="leave-title" aria-describedby="leave-what" onKeyDown=${escape}>
    <h4 id="leave-title">Your edit is not saved</h4>
    <p id="leave-what">${where}? ${drafts
      ? "Your text stays in this browser as a draft, offered again when you open this page, unless you discard it."
      : "What you typed is lost."}</p>
    <div class="row">
      <button type="button" class="primary" ref=${stay} onClick=${onStay}>Keep editing</button>
      ${drafts ? html`<button type="button" onClick=${onLeave}>${closing ? "Close, keep the draft" : "Leave, keep the draft"}</button>` : null}
      <button type="button" class="danger" onClick=${onDiscard}>${drafts ? "Discard the edit" : "Discard and leave"}</button>
    </div>
  </div>`;
}

// ------------------------------------------------------------------ merge by hand

export const MARKS = { theirs: "<<<<<<< theirs", middle: "=======", yours: ">>>>>>> yours" };
const line = (text) => (text && !text.endsWith("\n") ? text + "\n" : text);

/** Their text and yours in one, as git writes a conflict: where the two differ, their lines
 * between `<<<<<<< theirs` and `=======`, yours between `=======` and `>>>>>>> yours`. */
export function mergeText(theirs, mine, writer) {
  const parts = diffLines(theirs ?? "", mine ?? "");
  let out = "";
  for (let index = 0; index < parts.length; ) {
    if (!parts[index].added && !parts[index].removed) {
      out += parts[index].value;
      index += 1;
      continue;
    }
    let them = "";
    let you = "";
    for (; index < parts.length && (parts[index].added || parts[index].removed); index += 1) {
      if (parts[index].removed) them += parts[index].value;
      else you += parts[index].value;
    }
    out = line(out);
    out += `${MARKS.theirs}${writer ? ` (${writer})` : ""}\n${line(them)}${MARKS.middle}\n${line(you)}${MARKS.yours}\n`;
  }
  return out;
}

const hasMarks = (text) => /^<{7} theirs/m.test(text) && /^>{7} yours/m.test(text);

// ------------------------------------------------------------------ the editor

function Conflict({ project, path, mine, theirs, onKept, onMerge }) {
  const act = useAction();
  const writer = who(theirs.last_write?.principal, theirs.last_write?.actor);
  const keepMine = () =>
    act.run(() => call("PUT", pageUrl(project, path), { body: { content: mine, if_version: theirs.version ?? "absent" } })).then(
      (answer) => answer && onKept(answer),
    );
  return html`<section class="card conflict" aria-labelledby="conflict-title">
    <h4 id="conflict-title">Conflict: someone else saved first</h4>
    <p>${theirs.content === null
      ? html`Your edit was not saved: someone deleted this page after you began.`
      : html`Your edit was not saved: <strong>${writer}</strong> saved this page
          ${theirs.last_write?.at ? html` <${When} iso=${theirs.last_write.at} />` : ""} after you began
          (<span title=${theirs.version}>their version</span>).`}${" "}
      Nothing is written until you choose: <strong>Keep mine</strong> saves your text over theirs,${" "}
      <strong>Keep theirs</strong> drops your edit, <strong>Merge by hand</strong> opens both texts in the editor, each difference marked, on top of theirs.</p>
    <div class="both">
      <div><h5>Their version</h5><pre aria-label="Their version">${theirs.content ?? "(deleted)"}</pre></div>
      <div><h5>Your version</h5><pre aria-label="Your version">${mine}</pre></div>
    </div>
    <${Difference} before=${theirs.content ?? ""} after=${mine} label="Difference from their version to yours" />
    <div class="row">
      <button type="button" class="primary" disabled=${act.busy} onClick=${keepMine}>Keep mine</button>
      <button type="button" disabled=${act.busy} onClick=${() => onKept(null)}>Keep theirs</button>
      <button type="button" disabled=${act.busy} onClick=${() => onMerge(mergeText(theirs.content, mine, writer), theirs)}>Merge by hand</button>
    </div>
    <${Problem} error=${act.error} />
  </section>`;
}

/** What the text will look like, drawn by the same safe renderer as the page itself. */
export function Preview({ text, path, known }) {
  const [coloured, recolour] = useState(0);
  const drawn = useMemo(() => renderPage(body(text), path, known), [text, path, known, coloured]);
  useGrammars(drawn.grammars, () => recolour((n) => n + 1));
  usePlugins(drawn.plugins, () => recolour((n) => n + 1));
  return html`<div class="preview" role="region" aria-label="Preview"><p class="muted preview-label" aria-hidden="true">Preview</p><div class="page-body" tabindex="0">${drawn.body}</div></div>`;
}

/** Ctrl-S or Cmd-S saves (the form's own submit), instead of the browser's Save page. */
const saveKey = (form) => (event) => {
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
    event.preventDefault();
    form.current?.requestSubmit();
  }
};

/**
 * The editor of a page. `page`: what the page holds ({content, version}); `draft`: a kept draft to
 * begin from ({text, base}). onDone(answer): saved (the PUT's answer), or null when closed without
 * saving (the draft, if any, kept unless discarded).
 */
export function Editor({ project, path, page, known, draft, onDone }) {
  const [text, setText] = useState(draft?.text ?? page.content);
  const [base, setBase] = useState(draft?.base ?? page.version);
  const [saved, setSaved] = useState(page.content); // what the page holds, as far as this editor knows
  const [merging, setMerging] = useState(null); // {theirs, mine, settled}: the two texts merged by hand
  const [conflict, setConflict] = useState(null);
  const [refused, setRefused] = useState(null);
  const act = useAction();
  const form = useRef(null);
  const area = useRef(null);
  const dirty = text !== saved;
  const close = () => onDone(null);
  const [asking, ask, settle] = useLeaveGuard(dirty && !conflict, close);
  useEffect(() => {
    if (dirty) keepDraft(project, path, text, base);
    else dropDraft(project, path);
  }, [text, base]);
  useEffect(() => area.current?.focus(), []);
  const save = async (event) => {
    event.preventDefault();
    if (act.busy) return;
    if (merging && hasMarks(text)) {
      setRefused("The text still holds the merge marks (<<<<<<< theirs, =======, >>>>>>> yours): keep what should stay, delete the marks, then Save.");
      return;
    }
    setRefused(null);
    const answer = await act.run(() => call("PUT", pageUrl(project, path), { body: { content: text, if_version: base } }));
    if (answer) {
      dropDraft(project, path);
      onDone(answer);
    }
  };
  const cancel = () => (dirty ? ask({ close: true }) : close());
  useEffect(() => {
    if (act.error?.status !== 409) return;
    get(pageUrl(project, path)).then(
      (theirs) => setConflict({ mine: text, theirs }),
      (error) => (error.status === 404 ? setConflict({ mine: text, theirs: { content: null, version: null } }) : null),
    );
  }, [act.error]);
  if (conflict) {
    return html`<${Conflict} project=${project} path=${path} mine=${conflict.mine} theirs=${conflict.theirs}
      onKept=${(answer) => {
        dropDraft(project, path);
        onDone(answer);
      }}
      onMerge=${(merged, theirs) => {
        setSaved(theirs.content ?? "");
        setText(merged);
        setBase(theirs.version ?? "absent");
        setMerging({ theirs: theirs.content ?? "", mine: conflict.mine, settled: act.error });
        setConflict(null);
      }} />`;
  }
  const keys = (event) => {
    saveKey(form)(event);
    if (isEscape(event) && !asking) {
      event.preventDefault();
      cancel();
    }
  };
  return html`${asking
      ? html`<${LeavePrompt} closing=${Boolean(asking.close)} drafts=${true} onStay=${() => {
          settle(false);
          area.current?.focus();
        }} onLeave=${() => settle(true)} onDiscard=${() => {
          dropDraft(project, path);
          setSaved(text); // nothing left to ask about
          settle(true);
        }} />`
      : null}
    <form class="editor" onSubmit=${save} ref=${form} onKeyDown=${keys}>
    ${merging
      ? html`<p class="card merge-help" id="merge-help">Merging by hand: where the two versions differ, their lines stand between${" "}
          <code>${MARKS.theirs}</code> and <code>${MARKS.middle}</code>, yours between <code>${MARKS.middle}</code> and <code>${MARKS.yours}</code>.${" "}
          Keep what should stay, delete the marks, then Save (over their version).</p>`
      : null}
    <div class="split">
      <div class="write">
        <label>Content<textarea name="content" rows="18" ref=${area} value=${text} aria-describedby=${merging ? "merge-help" : null}
          onInput=${(event) => setText(event.currentTarget.value)}></textarea></label>
        <div class="row actions">
          <button type="submit" class="primary" disabled=${act.busy}>Save</button>
          <button type="button" onClick=${cancel}>Cancel</button>
          <span class="muted">${dirty ? "Not saved yet: a draft is kept in this browser." : "No changes."}</span>
        </div>
        ${refused ? html`<p class="error" role="alert">${refused}</p>` : null}
        ${act.error?.status === 409
          ? act.error !== merging?.settled ? html`<p role="status">Someone else saved first; reading their version…</p>` : null
          : html`<${Problem} error=${act.error} />`}
        <p class="muted">Ctrl-S (⌘-S) saves, Escape closes. Saving asks for the version you opened${base && base !== "absent" ? ` (${short(base)})` : ""}: if someone else saved since, you choose what to keep.</p>
      </div>
      ${merging && hasMarks(text)
        ? html`<div class="preview" role="region" aria-label="Both texts">
            <p class="muted preview-label">The preview is drawn once the merge marks are gone. The two texts, as they were:</p>
            <h4>Their version</h4><pre tabindex="0" aria-label="Their version">${merging.theirs}</pre>
            <h4>Your version</h4><pre tabindex="0" aria-label="Your version">${merging.mine}</pre>
          </div>`
        : html`<${Preview} text=${text} path=${path} known=${known} />`}
    </div>
  </form>`;
}

/** A draft of this page kept in this browser, offered back: **Restore the draft** opens the
 * editor with it (saving asks for the version it began on, so a page changed since is a conflict
 * to settle, never overwritten), **Discard the draft** forgets it. */
export function DraftOffer({ draft, version, onRestore, onDiscard }) {
  return html`<div class="card draft" role="region" aria-label="Unsaved draft">
    <p><strong>An unsaved edit of this page is kept in this browser</strong> (typed ${ago(draft.at)}${draft.base && draft.base !== version ? ", and the page has changed since it began: saving it will ask what to keep" : ""}).</p>
    <div class="row">
      <button type="button" class="primary" onClick=${onRestore}>Restore the draft</button>
      <button type="button" class="danger" onClick=${onDiscard}>Discard the draft</button>
    </div>
  </div>`;
}

/** New page: a path nobody holds yet (`if_version: "absent"`); a path that is taken is said in
 * words, with the page to open instead. Moving away from typed text asks first. */
export function NewPage({ project, known, onMade }) {
  const [path, setPath] = useState("");
  const [content, setContent] = useState(NEW_PAGE);
  const [taken, setTaken] = useState(null);
  const [made, setMade] = useState(null);
  const act = useAction();
  const form = useRef(null);
  const dirty = !made && content !== NEW_PAGE; // the text typed is what a move would lose
  const [asking, , settle] = useLeaveGuard(dirty, () => {});
  const canonical = (typed) => "/fs/" + typed.trim().replace(/^\/+/, "").replace(/^fs\//, "");
  const make = async (event) => {
    event.preventDefault();
    if (act.busy) return;
    setTaken(null);
    const asked = path.trim();
    const answer = await act.run(() => call("PUT", pageUrl(project, asked), { body: { content, if_version: "absent" } }));
    if (answer) setMade(answer.path); // the guard lets go first (the effect below runs after its release)
  };
  useEffect(() => {
    if (made) onMade(made);
  }, [made]);
  useEffect(() => {
    if (act.error?.status === 409) setTaken(canonical(path));
  }, [act.error]);
  return html`<section aria-labelledby="wiki-view">
    <h3 id="wiki-view">New page</h3>
    ${asking
      ? html`<${LeavePrompt} closing=${false} drafts=${false} onStay=${() => settle(false)} onLeave=${() => settle(true)}
          onDiscard=${() => settle(true)} />`
      : null}
    <form onSubmit=${make} ref=${form} onKeyDown=${saveKey(form)} class="editor">
      <label>Path<input name="path" required placeholder="notes/deploy.md" value=${path} onInput=${(event) => setPath(event.currentTarget.value)} /></label>
      <div class="split">
        <div class="write">
          <label>Content<textarea name="content" rows="14" value=${content} onInput=${(event) => setContent(event.currentTarget.value)}></textarea></label>
          <div class="row actions"><button type="submit" class="primary" disabled=${act.busy}>Create</button></div>
        </div>
        <${Preview} text=${content} path=${canonical(path || "new.md")} known=${known} />
      </div>
    </form>
    <p class="muted">Creating asks for a path nobody holds yet; Ctrl-S (⌘-S) creates too.</p>
    ${taken
      ? html`<div class="error" role="alert"><p>A page already exists at ${taken}: nothing was written.${" "}
          <a href=${pageHref(taken)}>Open that page</a>, or choose another path.</p>
          <p class="muted">${act.error?.message}</p></div>`
      : html`<${Problem} error=${act.error} />`}
  </section>`;
}
