// Event log: the project's events, newest first, paged by the log's own cursor.
import { html, useState } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { Loaded, When, scoped, useConsole, useLoad } from "../ui.js";

const SIZES = [10, 20, 50];

/** An event type or a payload key in words: "knowledge_base_created" -> "knowledge base created". */
const words = (name) => String(name).replaceAll("_", " ");

function summary(payload) {
  return Object.entries(payload ?? {})
    .filter(([, value]) => value !== null && value !== "" && typeof value !== "object")
    .map(([key, value]) => `${words(key)}: ${value}`)
    .join(" · ");
}

export default function EventLog() {
  const { project } = useConsole();
  const [cursors, setCursors] = useState([null]);
  const [size, setSize] = useState(20);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => api.get("/knowledge/events", { ...scoped(project), limit: size, cursor }), [project, cursor, size]);
  return html`<label>Events a page<select value=${size} onChange=${(event) => { setSize(Number(event.currentTarget.value)); setCursors([null]); }}>
      ${SIZES.map((n) => html`<option value=${n}>${n}</option>`)}</select></label>
    <${Loaded} load=${page} what="the event log">
    ${(answer) => html`
      <p class="muted" role="status">${project ? `Project ${project}` : "The console default"}, newest first; page ${cursors.length}.</p>
      ${answer.events.length === 0
        ? html`<p>No events recorded${cursors.length > 1 ? " before these" : ""}.</p>`
        : html`<table>
            <thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Who</th><th scope="col">Details</th></tr></thead>
            <tbody>
              ${answer.events.map(
                (event) => html`<tr key=${event.event_id}>
                  <td data-label="When"><${When} iso=${event.at} /></td>
                  <td data-label="Event"><span title=${event.event_type}>${words(event.event_type)}</span></td>
                  <td data-label="Who">${event.actor}</td>
                  <td data-label="Details">${summary(event.payload)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`}
      <div class="row">
        <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors([null])}>Newest</button>
        <button type="button" disabled=${!answer.next_cursor} onClick=${() => setCursors([...cursors, answer.next_cursor])}>Older events</button>
      </div>
    `}
  <//>`;
}
