// The form that adds a memory, or corrects one (Add, Edit).
//
// `memory` is the memory to correct, or null for a new one. Save sends
// memory/add, or memory/update (a new wording replaces the memory as a new
// one and keeps the old as its history; type, tags, owner and expiry change
// in place), then tells `saved` with the id the memory has now; Cancel tells
// `cancel`. A refusal (a duplicate, a code that would be lost, too long) is
// shown in the form, which keeps what was typed.

import { LitElement, html, nothing } from "lit";
import { persons } from "./people.js";
import { translate } from "./strings.js";
import { partStyles } from "./styles.js";

// What a person may choose as a memory's type (profiles are written by
// the integration).
export const EDITABLE_TYPES = ["fact", "preference", "instruction", "event", "summary", "other"];

export class MemoryEditor extends LitElement {
  static properties = {
    hass: { attribute: false },
    memory: { attribute: false },
    _error: { state: true },
  };

  constructor() {
    super();
    this.memory = null;
    this._error = "";
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  // The form's first values: the memory's, or a new household fact's.
  _start() {
    const memory = this.memory;
    if (!memory) return { content: "", memory_type: "fact", tags: "", person: "household", expires_at: "" };
    return {
      content: memory.content,
      memory_type: memory.type,
      tags: memory.tags.join(", "),
      person: memory.household ? "household" : memory.scope,
      expires_at: memory.expires_at ? memory.expires_at.slice(0, 16) : "",
    };
  }

  async _save(event) {
    event.preventDefault();
    const form = new FormData(event.target);
    const tags = String(form.get("tags") ?? "")
      .split(",")
      .map((tag) => tag.trim())
      .filter(Boolean);
    const expires = String(form.get("expires_at") ?? "");
    const person = String(form.get("person"));
    const message = {
      content: String(form.get("content") ?? ""),
      memory_type: String(form.get("memory_type")),
      tags,
    };
    try {
      let id;
      if (this.memory) {
        const changed = await this.hass.callWS({
          ...message,
          type: "memory/update",
          memory_id: this.memory.id,
          person,
          expires_at: expires ? new Date(expires).toISOString() : null,
        });
        id = changed.memory.id;
      } else {
        if (person !== "household") message.person = person;
        if (expires) message.expires_at = new Date(expires).toISOString();
        id = (await this.hass.callWS({ ...message, type: "memory/add" })).id;
      }
      this._error = "";
      this.dispatchEvent(new CustomEvent("saved", { detail: { id }, bubbles: true, composed: true }));
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  _cancel() {
    this.dispatchEvent(new CustomEvent("cancel", { bubbles: true, composed: true }));
  }

  render() {
    const start = this._start();
    return html`<form class="editor" @submit=${this._save} aria-label=${this.memory ? this.t("edit") : this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${start.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${EDITABLE_TYPES.map(
            (kind) => html`<option value=${kind} ?selected=${kind === start.memory_type}>${kind}</option>`,
          )}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${start.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${start.person === "household"}>${this.t("household")}</option>
          ${persons(this.hass).map(
            (person) => html`<option value=${person.id} ?selected=${person.id === start.person}>${person.name}</option>`,
          )}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${start.expires_at} />
      </label>
      ${this._error ? html`<p class="error" role="alert">${this.t("error", { error: this._error })}</p>` : nothing}
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${this._cancel}>${this.t("cancel")}</button>
      </div>
    </form>`;
  }

  static styles = partStyles;
}

if (!customElements.get("memory-editor")) customElements.define("memory-editor", MemoryEditor);
