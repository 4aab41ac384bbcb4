// Modules: every axis a row; a control only on the knowledge module's enabled axis; every other
// next action as its sentence with who can fix it.
import { html } from "../vendor/preact-htm.module.js";
import * as api from "../api.js";
import { EnableKnowledge } from "../enable.js";
import { Loaded, useConsole, useLoad, when } from "../ui.js";

const AXES = ["installed", "configured", "healthy", "enabled", "entitled"];

function Module({ module }) {
  return html`<section class="card" aria-labelledby=${"module-" + module.id}>
    <h3 id=${"module-" + module.id}>${module.label} <span class=${module.summary}>(${module.summary})</span></h3>
    <table>
      <thead><tr><th scope="col">Axis</th><th scope="col">State</th><th scope="col">Condition</th><th scope="col">Next</th></tr></thead>
      <tbody>
        ${AXES.map((name) => {
          const axis = module.axes[name];
          const control = module.id === "knowledge" && name === "enabled" && axis.ok === false;
          return html`<tr key=${name}>
            <th scope="row">${name}</th>
            <td data-label="State" class=${axis.state}>${axis.state}</td>
            <td data-label="Condition">${axis.condition}</td>
            <td data-label="Next">
              ${control
                ? html`<${EnableKnowledge} />`
                : axis.next_action
                  ? html`${axis.next_action}${axis.who_can_fix ? html` <span class="muted">(${axis.who_can_fix} can fix this)</span>` : null}`
                  : null}
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}

export default function Modules() {
  const { status } = useConsole();
  const modules = useLoad(() => api.get("/modules"), [status?.enabled]);
  return html`<${Loaded} load=${modules} what="the modules">
    ${(answer) => html`
      <p class="muted">Checked ${when(answer.checked_at)}. ${answer.entitlement_note}</p>
      ${answer.modules.map((module) => html`<${Module} key=${module.id} module=${module} />`)}
    `}
  <//>`;
}
