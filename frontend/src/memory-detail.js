// One memory, opened: its text and every field, its history, and what can
// be done with it (Edit, Forget, Restore, Erase for good).
//
// `detail` is memory/get's answer. What it does it tells the panel, which
// keeps the list: `changed` ({id, purged}) after a forget, restore, erase
// or correction (a new wording has a new id), `show` ({id}) to open
// another memory of its history, `open-conversation` ({id}) for the
// conversation it came from, `failed` ({message}), `close`. While the
// correction form is open, `editing` is true and a live update leaves the
// memory as it is on screen.

import { LitElement, html, nothing } from "lit";
import "./memory-editor.js";
import { dateText } from "./people.js";
import { translate } from "./strings.js";
import { partStyles } from "./styles.js";

export class MemoryDetail extends LitElement {
  static properties = {
    hass: { attribute: false },
    detail: { attribute: false },
    editing: { state: true },
  };

  constructor() {
    super();
    this.detail = null;
    this.editing = false;
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  willUpdate(changed) {
    // Another memory opened in the same dialog: its own text, not a form.
    if (changed.has("detail") && changed.get("detail")?.memory.id !== this.detail?.memory.id) {
      this.editing = false;
    }
  }

  _tell(name, detail = {}) {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  async _act(type, purge = false) {
    if (purge && !window.confirm(this.t("purgeConfirm"))) return;
    const id = this.detail.memory.id;
    try {
      const message = { type, memory_ids: [id] };
      if (purge) message.purge = true;
      await this.hass.callWS(message);
      this._tell("changed", { id, purged: purge });
    } catch (err) {
      this._tell("failed", { message: err?.message ?? String(err) });
    }
  }

  _saved(event) {
    event.stopPropagation();
    this.editing = false;
    this._tell("changed", { id: event.detail.id, purged: false });
  }

  _date(value) {
    return dateText(this.hass, value, this.t("never"));
  }

  render() {
    if (!this.detail) return nothing;
    const { memory, superseded, superseded_by: supersededBy, has_conversation: fromConversation } =
      this.detail;
    const field = (label, value) => html`<dt>${label}</dt><dd>${value}</dd>`;
    const origin = this.t(`origin_${memory.source.origin}`);
    return html`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${memory.id}`}>
      <header>
        <h2>#${memory.id}</h2>
        <button @click=${() => this._tell("close")} aria-label=${this.t("close")}>✕</button>
      </header>
      ${this.editing
        ? html`<memory-editor
            .hass=${this.hass}
            .memory=${memory}
            @saved=${this._saved}
            @cancel=${(event) => {
              event.stopPropagation();
              this.editing = false;
            }}
          ></memory-editor>`
        : html`<p class="full">${memory.content}</p>`}
      <dl>
        ${field(this.t("owner"), memory.owner)}
        ${field(this.t("type"), this.t(`type_${memory.type}`))}
        ${field(this.t("status"), this.t(memory.status))}
        ${field(this.t("tags"), memory.tags.join(", ") || "–")}
        ${field(this.t("created"), this._date(memory.created_at))}
        ${field(this.t("updated"), this._date(memory.updated_at))}
        ${memory.expires_at ? field(this.t("expires"), this._date(memory.expires_at)) : nothing}
        ${field(this.t("recalledTimes"), memory.recall_count)}
        ${field(this.t("lastRecalled"), this._date(memory.last_recalled_at))}
        ${field(
          this.t("origin"),
          fromConversation
            ? html`<button class="link" @click=${() => this._tell("open-conversation", { id: memory.id })}>
                ${origin} · ${this.t("openConversation")}
              </button>`
            : origin,
        )}
      </dl>
      ${superseded.length ? this._chain(this.t("replaced"), superseded) : nothing}
      ${supersededBy.length ? this._chain(this.t("replacedBy"), supersededBy) : nothing}
      <div class="actions">
        ${memory.status === "active" && !this.editing
          ? html`<button @click=${() => (this.editing = true)}>${this.t("edit")}</button>`
          : nothing}
        ${memory.status === "active"
          ? html`<button @click=${() => this._act("memory/forget")}>${this.t("forget")}</button>`
          : nothing}
        ${memory.status === "archived"
          ? html`<button @click=${() => this._act("memory/restore")}>${this.t("restore")}</button>`
          : nothing}
        <button class="danger" @click=${() => this._act("memory/forget", true)}>${this.t("purge")}</button>
      </div>
    </section>`;
  }

  _chain(title, memories) {
    return html`<h3>${title}</h3>
      <ol class="chain">
        ${memories.map(
          (memory) =>
            html`<li><button class="link" @click=${() => this._tell("show", { id: memory.id })}>
              #${memory.id} ${memory.content}
            </button></li>`,
        )}
      </ol>`;
  }

  static styles = partStyles;
}

if (!customElements.get("memory-detail")) customElements.define("memory-detail", MemoryDetail);
