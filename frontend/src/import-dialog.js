// The Memory panel's Import dialog: paste or upload, preview, then import.
//
// What was pasted, or the uploaded file's bytes (base64: AI Long Term
// Memory's database is not text), goes to memory/import_preview, which says
// how many memories are new, duplicates, would replace a near duplicate,
// are history or hold a code, and whose each source owner's will be; an
// owner can be given to the household or a person, and the preview is read
// again. Import sends the same to memory/import (all or nothing), while
// memory/import_progress tells how many rows are written (a bar); Cancel
// leaves everything as it was. Both commands apply the user's reach.

import { LitElement, html, nothing } from "lit";
import { persons } from "./people.js";
import { translate } from "./strings.js";
import { partStyles } from "./styles.js";

const FORMATS = ["assist_memory", "markdown", "lines", "csv", "mem0", "ha_ai_memory", "home_agent"];

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let start = 0; start < bytes.length; start += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  }
  return btoa(binary);
}

export class MemoryImportDialog extends LitElement {
  static properties = {
    hass: { attribute: false },
    _text: { state: true },
    _file: { state: true },
    _format: { state: true },
    _source: { state: true },
    _owners: { state: true },
    _preview: { state: true },
    _done: { state: true },
    _busy: { state: true },
    _error: { state: true },
    _progress: { state: true },
  };

  constructor() {
    super();
    this._text = "";
    this._file = null;
    this._format = "";
    this._source = "";
    this._owners = {};
    this._preview = null;
    this._done = null;
    this._busy = false;
    this._error = "";
    this._progress = null;
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  _message() {
    const message = this._file ? { data: this._file.data } : { text: this._text };
    if (this._format) message.format = this._format;
    if (this._source.trim()) message.source = this._source.trim();
    if (Object.keys(this._owners).length) message.owners = this._owners;
    return message;
  }

  async _ask(type) {
    this._busy = true;
    this._error = "";
    try {
      return await this.hass.callWS({ type, ...this._message() });
    } catch (err) {
      this._error = err?.message ?? String(err);
      return null;
    } finally {
      this._busy = false;
    }
  }

  async _runPreview() {
    this._preview = await this._ask("memory/import_preview");
  }

  async _runImport() {
    let stop;
    try {
      stop = await this.hass.connection.subscribeMessage(
        (step) => (this._progress = step),
        { type: "memory/import_progress" },
      );
    } catch {
      stop = undefined; // no progress to show; the import still runs
    }
    let done;
    try {
      done = await this._ask("memory/import");
    } finally {
      this._progress = null;
      stop?.();
    }
    if (done) {
      this._done = done;
      this._preview = null;
      this.dispatchEvent(new CustomEvent("imported", { bubbles: true, composed: true }));
    }
  }

  async _picked(event) {
    const file = event.target.files?.[0];
    this._preview = null;
    this._owners = {};
    this._file = file ? { name: file.name, data: base64(await file.arrayBuffer()) } : null;
  }

  _changed(field, value) {
    this[field] = value;
    this._preview = null;
  }

  async _own(owner, scope) {
    this._owners = { ...this._owners, [owner]: scope };
    await this._runPreview();
  }

  _close() {
    this.dispatchEvent(new CustomEvent("close", { bubbles: true, composed: true }));
  }

  _form() {
    return html`<label>
        <span>${this.t("importPaste")}</span>
        <textarea
          rows="6"
          .value=${this._text}
          ?disabled=${this._file !== null}
          @input=${(e) => this._changed("_text", e.target.value)}
        ></textarea>
      </label>
      <label>
        <span>${this.t("importFile")}</span>
        <input type="file" @change=${this._picked} />
      </label>
      <label>
        <span>${this.t("importFormat")}</span>
        <select @change=${(e) => this._changed("_format", e.target.value)}>
          <option value="">${this.t("importDetect")}</option>
          ${FORMATS.map((kind) => html`<option value=${kind}>${this.t(`format_${kind}`)}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("importSource")}</span>
        <input .value=${this._source} @input=${(e) => this._changed("_source", e.target.value)} />
      </label>`;
  }

  _plan(plan) {
    const count = (key, value) => html`<dt>${this.t(key)}</dt><dd>${value}</dd>`;
    return html`<dl class="import-plan">
        ${count("importFormatFound", this.t(`format_${plan.format}`))}
        ${count("importTotal", plan.total)} ${count("importNew", plan.new)}
        ${count("importDuplicates", plan.duplicates)} ${count("importSupersedes", plan.supersedes)}
        ${count("importHistory", plan.history)} ${count("importSecrets", plan.secrets)}
      </dl>
      <h3>${this.t("importOwners")}</h3>
      <ul class="import-owners">
        ${Object.entries(plan.owners).map(
          ([owner, scope]) => html`<li>
            <label>
              <span>${owner || this.t("importNoOwner")} (${plan.by_scope[scope] ?? 0})</span>
              <select
                aria-label=${owner || this.t("importNoOwner")}
                @change=${(e) => this._own(owner, e.target.value)}
              >
                ${[["household", this.t("household")], ...persons(this.hass).map((p) => [p.id, p.name])].map(
                  ([value, name]) => html`<option value=${value} ?selected=${value === scope}>${name}</option>`,
                )}
              </select>
            </label>
          </li>`,
        )}
      </ul>`;
  }

  render() {
    const ready = this._file !== null || this._text.trim() !== "";
    return html`<section class="detail" role="dialog" aria-label=${this.t("import")}>
      <header>
        <h2>${this.t("import")}</h2>
        <button @click=${this._close} aria-label=${this.t("close")}>✕</button>
      </header>
      ${this._done
        ? html`<p role="status">${this.t("importDone", { count: this._done.imported, duplicates: this._done.duplicates })}</p>`
        : this._form()}
      ${this._progress
        ? html`<p role="status">
            <progress max=${this._progress.total} .value=${this._progress.done}></progress>
            ${this.t("importProgress", this._progress)}
          </p>`
        : nothing}
      ${this._error ? html`<p class="error" role="alert">${this._error}</p>` : nothing}
      ${this._preview ? this._plan(this._preview) : nothing}
      <div class="actions">
        ${this._done
          ? html`<button @click=${this._close}>${this.t("close")}</button>`
          : html`<button ?disabled=${!ready || this._busy} @click=${this._runPreview}>
                ${this.t("importPreview")}
              </button>
              <button class="add" ?disabled=${!this._preview || this._busy} @click=${this._runImport}>
                ${this.t("import")}
              </button>
              <button @click=${this._close}>${this.t("cancel")}</button>`}
      </div>
    </section>`;
  }

  static styles = partStyles;
}

if (!customElements.get("memory-import-dialog")) customElements.define("memory-import-dialog", MemoryImportDialog);
