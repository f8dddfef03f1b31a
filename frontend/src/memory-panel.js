// The Memory panel: browse, search, open and curate what the assistant remembers.
//
// One web component, registered by custom_components/memory/panel.py with
// panel_custom. Home Assistant gives it `hass` (the connection, the user, the
// language, the theme), `narrow` (a phone-width layout) and `panel`. It talks
// only to the integration's websocket API (memory/browse, memory/get,
// memory/forget, memory/restore, memory/subscribe), which applies the user's
// reach: the panel never sees a memory the user may not.

import { LitElement, css, html, nothing } from "lit";
import { translate } from "./strings.js";

const PAGE = 50;
const TYPING_PAUSE_MS = 250;

export class MemoryPanel extends LitElement {
  static properties = {
    hass: { attribute: false },
    narrow: { type: Boolean },
    panel: { attribute: false },
    _memories: { state: true },
    _total: { state: true },
    _cursor: { state: true },
    _query: { state: true },
    _person: { state: true },
    _status: { state: true },
    _order: { state: true },
    _open: { state: true },
    _loading: { state: true },
    _error: { state: true },
    _editing: { state: true },
    _overview: { state: true },
  };

  constructor() {
    super();
    this._memories = [];
    this._total = 0;
    this._cursor = null;
    this._query = "";
    this._person = "";
    this._status = "active";
    this._order = "newest";
    this._open = null;
    this._loading = false;
    this._error = "";
    this._editing = null;
    this._overview = null;
    this._asked = 0;
    this._typing = undefined;
    this._unsubscribe = undefined;
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  connectedCallback() {
    super.connectedCallback();
    if (this.hass) this._start();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this._unsubscribe?.then((remove) => remove()).catch(() => {});
    this._unsubscribe = undefined;
  }

  updated(changed) {
    if (changed.has("hass") && this.hass && !this._unsubscribe) this._start();
  }

  _start() {
    this._unsubscribe = this.hass.connection.subscribeMessage(
      () => {
        this._load(false);
        this._loadOverview();
      },
      { type: "memory/subscribe" },
    );
    this._load(false);
    this._loadOverview();
  }

  async _loadOverview() {
    try {
      this._overview = await this.hass.callWS({ type: "memory/overview" });
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  async _refreshProfile(profile) {
    try {
      await this.hass.callWS({
        type: "memory/refresh_profile",
        person: profile.household ? "household" : profile.scope,
      });
      await this._loadOverview();
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  _overviewPart() {
    const overview = this._overview;
    if (!overview) return nothing;
    const { counts, health, profiles } = overview;
    const megabytes = (health.database_bytes / 1048576).toFixed(1);
    return html`<details class="overview">
      <summary>
        ${this.t("overview")}:
        ${["active", "expiring", "archived", "superseded"].map(
          (status) => html`<span class="chip">${this.t(status)} ${counts[status]}</span>`,
        )}
      </summary>
      <p class="health">
        ${this.t("health", {
          size: megabytes,
          search: health.model ?? this.t("keywordOnly"),
          waiting: health.digestion_waiting,
          calls: health.ai_task_calls_last_hour,
          cap: health.ai_task_max_calls_per_hour,
        })}
      </p>
      <h3>${this.t("profiles")}</h3>
      ${profiles.length
        ? html`<ul class="profiles">
            ${profiles.map(
              (profile) => html`<li>
                <span class="chip ${profile.household ? "house" : "person"}">${profile.owner}</span>
                <span class="content">${profile.content}</span>
                <button class="link" @click=${() => this._refreshProfile(profile)}>
                  ${this.t("refresh")}
                </button>
              </li>`,
            )}
          </ul>`
        : html`<p class="count">${this.t("noProfiles")}</p>`}
    </details>`;
  }

  async _load(more) {
    const asked = ++this._asked;
    const message = {
      type: "memory/browse",
      status: this._status,
      limit: PAGE,
      order: this._query.trim() ? "relevance" : this._order,
    };
    if (this._query.trim()) message.query = this._query.trim();
    if (this._person) message.person = this._person;
    if (more && this._cursor) message.cursor = this._cursor;
    this._loading = true;
    try {
      const page = await this.hass.callWS(message);
      if (asked !== this._asked) return; // a newer question is under way
      this._memories = more ? [...this._memories, ...page.memories] : page.memories;
      this._total = page.total;
      this._cursor = page.cursor;
      this._error = "";
    } catch (err) {
      if (asked === this._asked) this._error = err?.message ?? String(err);
    } finally {
      if (asked === this._asked) this._loading = false;
    }
  }

  _menu() {
    // Home Assistant opens its sidebar on this event (phone width).
    this.dispatchEvent(new Event("hass-toggle-menu", { bubbles: true, composed: true }));
  }

  _typed(event) {
    this._query = event.target.value;
    clearTimeout(this._typing);
    this._typing = setTimeout(() => this._load(false), TYPING_PAUSE_MS);
  }

  _chose(field, event) {
    this[field] = event.target.value;
    this._load(false);
  }

  async _show(id) {
    try {
      this._open = await this.hass.callWS({ type: "memory/get", memory_id: id });
      this._error = "";
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  async _act(type, id, purge = false) {
    if (purge && !window.confirm(this.t("purgeConfirm"))) return;
    try {
      const message = { type, memory_ids: [id] };
      if (purge) message.purge = true;
      await this.hass.callWS(message);
      if (purge) this._open = null;
      else await this._show(id);
      await this._load(false);
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  _edit(memory) {
    // null: closed; {}: a new memory; a memory: its correction.
    this._editing = memory
      ? {
          id: memory.id,
          content: memory.content,
          memory_type: memory.type,
          tags: memory.tags.join(", "),
          person: memory.household ? "household" : memory.scope,
          expires_at: memory.expires_at ? memory.expires_at.slice(0, 16) : "",
        }
      : { content: "", memory_type: "fact", tags: "", person: "household", expires_at: "" };
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
      if (this._editing.id) {
        const changed = await this.hass.callWS({
          ...message,
          type: "memory/update",
          memory_id: this._editing.id,
          person,
          expires_at: expires ? new Date(expires).toISOString() : null,
        });
        id = changed.memory.id;
      } else {
        if (person !== "household") message.person = person;
        if (expires) message.expires_at = new Date(expires).toISOString();
        id = (await this.hass.callWS({ ...message, type: "memory/add" })).id;
      }
      this._editing = null;
      await this._show(id);
      await this._load(false);
    } catch (err) {
      this._error = err?.message ?? String(err);
    }
  }

  _editor() {
    const editing = this._editing;
    const types = ["fact", "preference", "instruction", "event", "summary", "other"];
    return html`<form class="editor" @submit=${this._save} aria-label=${editing.id ? this.t("edit") : this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${editing.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${types.map((kind) => html`<option value=${kind} ?selected=${kind === editing.memory_type}>${kind}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${editing.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${editing.person === "household"}>${this.t("household")}</option>
          ${this._persons().map(
            (person) =>
              html`<option value=${person.id} ?selected=${person.id === editing.person}>${person.name}</option>`,
          )}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${editing.expires_at} />
      </label>
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${() => (this._editing = null)}>${this.t("cancel")}</button>
      </div>
    </form>`;
  }

  _persons() {
    return Object.values(this.hass?.states ?? {})
      .filter((state) => state.entity_id.startsWith("person."))
      .map((state) => ({
        id: state.entity_id,
        name: state.attributes.friendly_name ?? state.entity_id,
      }));
  }

  _date(value) {
    if (!value) return this.t("never");
    return new Date(value).toLocaleString(this.hass?.locale?.language ?? undefined);
  }

  render() {
    if (!this.hass) return nothing;
    return html`
      <header class=${this.narrow ? "narrow" : ""}>
        ${this.narrow
          ? html`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`
          : nothing}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${() => this._edit(null)}>${this.t("add")}</button>
        <input
          type="search"
          .value=${this._query}
          @input=${this._typed}
          placeholder=${this.t("searchHint")}
          aria-label=${this.t("search")}
        />
        <div class="filters">
          <label>
            <span>${this.t("owner")}</span>
            <select @change=${(e) => this._chose("_person", e)} aria-label=${this.t("owner")}>
              <option value="">${this.t("everyone")}</option>
              <option value="household">${this.t("household")}</option>
              ${this._persons().map(
                (person) => html`<option value=${person.id}>${person.name}</option>`,
              )}
            </select>
          </label>
          <label>
            <span>${this.t("status")}</span>
            <select @change=${(e) => this._chose("_status", e)} aria-label=${this.t("status")}>
              ${["active", "expiring", "archived", "superseded", "any"].map(
                (status) =>
                  html`<option value=${status} ?selected=${status === this._status}>
                    ${this.t(status)}
                  </option>`,
              )}
            </select>
          </label>
          <label>
            <span>${this.t("order")}</span>
            <select
              @change=${(e) => this._chose("_order", e)}
              aria-label=${this.t("order")}
              ?disabled=${Boolean(this._query.trim())}
            >
              ${["newest", "recalled"].map(
                (order) =>
                  html`<option value=${order} ?selected=${order === this._order}>
                    ${this.t(order)}
                  </option>`,
              )}
            </select>
          </label>
        </div>
      </header>
      ${this._error
        ? html`<p class="error" role="alert">${this.t("error", { error: this._error })}</p>`
        : nothing}
      <main>
        ${this._overviewPart()}
        <p class="count" aria-live="polite">
          ${this._loading && !this._memories.length
            ? this.t("loading")
            : this._memories.length
              ? this.t("shown", { shown: this._memories.length, total: this._total })
              : this.t("none")}
        </p>
        <ul class="list">
          ${this._memories.map((memory) => this._row(memory))}
        </ul>
        ${this._cursor
          ? html`<button class="more" @click=${() => this._load(true)}>${this.t("more")}</button>`
          : nothing}
      </main>
      ${this._open ? this._detail(this._open) : nothing}
      ${this._editing && !this._editing.id
        ? html`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            ${this._editor()}
          </section>`
        : nothing}
    `;
  }

  _row(memory) {
    return html`<li>
      <button
        class="memory ${memory.status}"
        @click=${() => this._show(memory.id)}
        aria-label=${`#${memory.id}: ${memory.content}`}
      >
        <span class="content">${memory.content}</span>
        <span class="meta">
          <span class="chip ${memory.household ? "house" : "person"}">${memory.owner}</span>
          <span>${memory.type}</span>
          <span>${this._date(memory.created_at)}</span>
          ${memory.status !== "active" ? html`<span class="chip">${this.t(memory.status)}</span>` : nothing}
        </span>
      </button>
    </li>`;
  }

  _detail({ memory, superseded, superseded_by: supersededBy }) {
    const field = (label, value) => html`<dt>${label}</dt><dd>${value}</dd>`;
    return html`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${memory.id}`}>
      <header>
        <h2>#${memory.id}</h2>
        <button
          @click=${() => {
            this._open = null;
            this._editing = null;
          }}
          aria-label=${this.t("close")}
        >
          ✕
        </button>
      </header>
      ${this._editing?.id === memory.id ? this._editor() : html`<p class="full">${memory.content}</p>`}
      <dl>
        ${field(this.t("owner"), memory.owner)}
        ${field(this.t("type"), memory.type)}
        ${field(this.t("status"), this.t(memory.status))}
        ${field(this.t("tags"), memory.tags.join(", ") || "–")}
        ${field(this.t("created"), this._date(memory.created_at))}
        ${field(this.t("updated"), this._date(memory.updated_at))}
        ${memory.expires_at ? field(this.t("expires"), this._date(memory.expires_at)) : nothing}
        ${field(this.t("recalledTimes"), memory.recall_count)}
        ${field(this.t("lastRecalled"), this._date(memory.last_recalled_at))}
        ${field(this.t("origin"), memory.source.origin)}
        ${memory.source.conversation_id
          ? field(this.t("conversation"), memory.source.conversation_id)
          : nothing}
      </dl>
      ${superseded.length ? this._chain(this.t("replaced"), superseded) : nothing}
      ${supersededBy.length ? this._chain(this.t("replacedBy"), supersededBy) : nothing}
      <div class="actions">
        ${memory.status === "active" && this._editing?.id !== memory.id
          ? html`<button @click=${() => this._edit(memory)}>${this.t("edit")}</button>`
          : nothing}
        ${memory.status === "active"
          ? html`<button @click=${() => this._act("memory/forget", memory.id)}>${this.t("forget")}</button>`
          : nothing}
        ${memory.status === "archived"
          ? html`<button @click=${() => this._act("memory/restore", memory.id)}>${this.t("restore")}</button>`
          : nothing}
        <button class="danger" @click=${() => this._act("memory/forget", memory.id, true)}>
          ${this.t("purge")}
        </button>
      </div>
    </section>`;
  }

  _chain(title, memories) {
    return html`<h3>${title}</h3>
      <ol class="chain">
        ${memories.map(
          (memory) =>
            html`<li><button class="link" @click=${() => this._show(memory.id)}>
              #${memory.id} ${memory.content}
            </button></li>`,
        )}
      </ol>`;
  }

  static styles = css`
    :host {
      display: block;
      min-height: 100vh;
      background: var(--primary-background-color);
      color: var(--primary-text-color);
      font-family: var(--paper-font-body1_-_font-family, var(--ha-font-family-body, sans-serif));
    }
    header {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: center;
      padding: 12px 16px;
      background: var(--app-header-background-color, var(--primary-color));
      color: var(--app-header-text-color, var(--text-primary-color));
    }
    .menu {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 22px;
      cursor: pointer;
      padding: 4px 8px;
    }
    h1 {
      margin: 0;
      font-size: 20px;
      font-weight: 400;
      flex: 0 0 auto;
    }
    input[type="search"] {
      flex: 1 1 240px;
      min-width: 0;
      padding: 8px 12px;
      border-radius: 8px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font-size: 16px;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 12px;
    }
    select {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    main {
      padding: 8px 16px 32px;
      max-width: 960px;
      margin: 0 auto;
    }
    .count {
      color: var(--secondary-text-color);
      font-size: 14px;
    }
    .list {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .memory {
      width: 100%;
      text-align: start;
      display: flex;
      flex-direction: column;
      gap: 6px;
      padding: 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      cursor: pointer;
    }
    .memory:focus-visible,
    button:focus-visible,
    select:focus-visible,
    input:focus-visible {
      outline: 2px solid var(--primary-color);
      outline-offset: 2px;
    }
    .memory.archived,
    .memory.superseded {
      opacity: 0.7;
    }
    .content {
      overflow-wrap: anywhere;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .chip {
      padding: 0 8px;
      border-radius: 10px;
      background: var(--secondary-background-color);
    }
    .chip.person {
      background: var(--primary-color);
      color: var(--text-primary-color);
    }
    .more,
    .actions button {
      margin-top: 12px;
      padding: 8px 16px;
      border-radius: 8px;
      border: 1px solid var(--primary-color);
      background: transparent;
      color: var(--primary-color);
      font: inherit;
      cursor: pointer;
    }
    .actions button.danger {
      border-color: var(--error-color);
      color: var(--error-color);
    }
    .error {
      margin: 8px 16px;
      color: var(--error-color);
    }
    .detail {
      position: fixed;
      inset: auto 0 0 auto;
      top: 0;
      width: min(420px, 100vw);
      overflow-y: auto;
      background: var(--card-background-color);
      color: var(--primary-text-color);
      border-inline-start: 1px solid var(--divider-color);
      box-shadow: var(--ha-card-box-shadow, 0 0 12px rgba(0, 0, 0, 0.3));
      padding-bottom: 24px;
    }
    .detail header {
      justify-content: space-between;
    }
    .detail header button {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 20px;
      cursor: pointer;
    }
    .detail h2 {
      margin: 0;
      font-size: 18px;
      font-weight: 400;
    }
    .full,
    .detail dl,
    .detail h3,
    .chain,
    .actions {
      margin-inline: 16px;
    }
    .full {
      font-size: 16px;
      overflow-wrap: anywhere;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 4px 12px;
      font-size: 14px;
    }
    dt {
      color: var(--secondary-text-color);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    .link {
      border: none;
      background: none;
      color: var(--primary-color);
      text-align: start;
      font: inherit;
      cursor: pointer;
      padding: 2px 0;
    }
    .overview {
      margin: 8px 0;
      padding: 8px 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
    }
    .overview summary {
      cursor: pointer;
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
    }
    .health {
      font-size: 13px;
      color: var(--secondary-text-color);
    }
    .profiles {
      list-style: none;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .profiles li {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
    }
    .editor {
      display: grid;
      gap: 8px;
      margin: 12px 16px;
    }
    .editor label {
      font-size: 14px;
    }
    textarea,
    .editor input {
      font: inherit;
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    .add {
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid currentColor;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
  `;
}

if (!customElements.get("memory-panel")) customElements.define("memory-panel", MemoryPanel);
