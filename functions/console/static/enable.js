// Enable knowledge: POST /settings {knowledge_enabled: true}, only where the caller may
// (manage_settings) and the variable does not pin the gate (then the variable is named instead).
import { html } from "./vendor/preact-htm.module.js";
import * as api from "./api.js";
import { Notice, Problem, may, useAction, useConsole } from "./ui.js";

export function EnableKnowledge() {
  const { me, status, refresh } = useConsole();
  const act = useAction();
  if (!status || status.enabled) return act.notice ? html`<${Notice} text=${act.notice} />` : null;
  if (status.gate_env_pinned) {
    return html`<p>Knowledge is switched by the variable <code>${status.gate_env_var}</code>; change it where the service is deployed.</p>`;
  }
  if (!may(me, "manage_settings")) {
    return html`<p class="muted">Someone who manages settings can enable knowledge.</p>`;
  }
  const enable = () =>
    act.run(async () => {
      await api.post("/settings", { knowledge_enabled: true });
      refresh();
    }, "Knowledge is enabled.");
  return html`<div class="row">
    <button class="primary" type="button" disabled=${act.busy} onClick=${enable}>Enable knowledge</button>
    <${Problem} error=${act.error} />
  </div>`;
}
