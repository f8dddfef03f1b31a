// The Memory panel: browse, search, open and curate what the assistant remembers.
//
// The panel's element, registered by custom_components/memory/panel.py with
// panel_custom; the search and filters are memory-filters.js, an opened
// memory memory-detail.js, the Add and Edit form memory-editor.js, the
// Conversations view conversations.js, the Import dialog import-dialog.js;
// the panel keeps the list, its selection and what is open. Home Assistant
// gives it `hass` (the connection, the user, the language, the theme),
// `narrow` (a phone-width layout) and `panel`. It talks only to the
// integration's websocket API (memory/browse, memory/get, memory/add,
// memory/update, memory/forget, memory/restore, memory/overview,
// memory/refresh_profile, memory/subscribe; the Conversations view in
// conversations.js), which applies the user's reach: the panel never sees a
// memory the user may not.
//
// A live update (memory/subscribe) reads the list again as deep as it is
// shown (live-list.js): the selection, the scroll position, an open memory
// and the search text stay; selected memories that left the list are
// unselected, and the panel says how many.

import { LitElement, html, nothing } from "lit";
import { repeat } from "lit/directives/repeat.js";
import "./conversations.js";
import "./import-dialog.js";
import { PagedList, keptSelection } from "./live-list.js";
import "./memory-detail.js";
import "./memory-editor.js";
import { MemoryFilters } from "./memory-filters.js";
import "./memory-overview.js";
import { dateText } from "./people.js";
import { translate } from "./strings.js";
import { panelStyles } from "./styles.js";

export class MemoryPanel extends LitElement {
  static properties = {
    hass: { attribute: false },
    narrow: { type: Boolean },
    panel: { attribute: false },
    _open: { state: true },
    _error: { state: true },
    _adding: { state: true },
    _view: { state: true },
    _selected: { state: true },
    _notice: { state: true },
    _importing: { state: true },
  };

  constructor() {
    super();
    // What the search and the filters ask (memory-filters.js).
    this._filters = new MemoryFilters(this, { changed: () => this._load(false) });
    // The memories they ask for (live-list.js).
    this._list = new PagedList(this, {
      key: "memories",
      message: () => this._filters.message(),
      fail: (err) => this._fail(err),
    });
    this._open = null;
    this._error = "";
    this._adding = false;
    this._view = "memories";
    this._selected = new Set();
    this._notice = "";
    this._unsubscribe = undefined;
  }

  _fail(err) {
    this._error = err?.message ?? String(err);
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
        this._refresh();
        this.renderRoot.querySelector("memory-overview")?.reload();
        this.renderRoot.querySelector("memory-conversations")?.reload();
      },
      { type: "memory/subscribe" },
    );
    this._load(false);
  }

  // A new question (a filter, the search) or the next page.
  async _load(more) {
    if (!(await this._list.load(more))) return;
    this._error = "";
    if (!more) this._keepSelection();
  }

  // Something changed elsewhere: the same question, as deep as it is shown.
  async _refresh() {
    if (await this._list.reread()) {
      this._keepSelection();
      this._error = "";
    }
    if (this._open && !this.renderRoot.querySelector("memory-detail")?.editing) await this._reopen();
  }

  // Unselect only what is no longer listed, and say so.
  _keepSelection() {
    const { kept, dropped } = keptSelection(this._selected, this._list.rows);
    if (!dropped) return;
    this._selected = kept;
    this._notice = this.t("selectionDropped", { count: dropped });
  }

  // The open memory, as it is now (reworded, forgotten or gone elsewhere).
  async _reopen() {
    const id = this._open.memory.id;
    try {
      const fresh = await this.hass.callWS({ type: "memory/get", memory_id: id });
      if (this._open?.memory.id === id) this._open = fresh;
    } catch (err) {
      if (this._open?.memory.id !== id) return;
      this._open = null;
      this._notice = this.t("openGone", { id, error: err?.message ?? String(err) });
    }
  }

  _menu() {
    // Home Assistant opens its sidebar on this event (phone width).
    this.dispatchEvent(new Event("hass-toggle-menu", { bubbles: true, composed: true }));
  }

  async _show(id) {
    try {
      this._open = await this.hass.callWS({ type: "memory/get", memory_id: id });
      this._error = "";
    } catch (err) {
      this._fail(err);
    }
  }

  // The open memory was forgotten, restored, erased or corrected.
  async _changed(event) {
    const { id, purged } = event.detail;
    if (purged) this._open = null;
    else await this._show(id);
    await this._load(false);
  }

  // A memory was added in the Add dialog: open it.
  async _added(event) {
    this._adding = false;
    await this._show(event.detail.id);
    await this._load(false);
  }

  // The selected memories, all at once (one command, one reach check).
  async _actOnSelected(type, purge = false) {
    const ids = [...this._selected];
    if (!ids.length) return;
    if (purge && !window.confirm(this.t("purgeManyConfirm", { count: ids.length }))) return;
    try {
      const message = { type, memory_ids: ids };
      if (purge) message.purge = true;
      await this.hass.callWS(message);
      this._selected = new Set();
      this._notice = "";
      if (this._open && ids.includes(this._open.memory.id)) this._open = null;
      await this._load(false);
    } catch (err) {
      this._fail(err);
    }
  }

  _toggle(id, event) {
    const selected = new Set(this._selected);
    if (event.target.checked) selected.add(id);
    else selected.delete(id);
    this._selected = selected;
    this._notice = "";
  }

  async _openConversation(memoryId) {
    this._open = null;
    this._view = "conversations";
    await this.updateComplete;
    await this.renderRoot.querySelector("memory-conversations")?.show({ memory_id: memoryId });
  }

  _openMemory(event) {
    this._view = "memories";
    this._show(event.detail.id);
  }

  _date(value) {
    return dateText(this.hass, value, this.t("never"));
  }

  render() {
    if (!this.hass) return nothing;
    const memories = this._view === "memories";
    return html`
      <header class=${this.narrow ? "narrow" : ""}>
        ${this.narrow
          ? html`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`
          : nothing}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${() => (this._adding = true)}>${this.t("add")}</button>
        <button class="add" @click=${() => (this._importing = true)}>${this.t("import")}</button>
        <div class="tabs" role="tablist">
          ${["memories", "conversations"].map(
            (view) => html`<button
              role="tab"
              aria-selected=${this._view === view ? "true" : "false"}
              @click=${() => (this._view = view)}
            >
              ${this.t(view)}
            </button>`,
          )}
        </div>
        ${memories ? this._filters.render(this.narrow) : nothing}
      </header>
      ${this._error
        ? html`<p class="error" role="alert">${this.t("error", { error: this._error })}</p>`
        : nothing}
      <main>
        <memory-overview .hass=${this.hass} @failed=${(event) => this._fail(event.detail)}></memory-overview>
        ${memories
          ? this._memoryList()
          : html`<memory-conversations
              .hass=${this.hass}
              .narrow=${this.narrow}
              @open-memory=${this._openMemory}
            ></memory-conversations>`}
      </main>
      ${this._open
        ? html`<memory-detail
            .hass=${this.hass}
            .detail=${this._open}
            @close=${() => (this._open = null)}
            @changed=${this._changed}
            @show=${(event) => this._show(event.detail.id)}
            @open-conversation=${(event) => this._openConversation(event.detail.id)}
            @failed=${(event) => this._fail(event.detail)}
          ></memory-detail>`
        : nothing}
      ${this._adding
        ? html`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            <memory-editor
              .hass=${this.hass}
              @saved=${this._added}
              @cancel=${() => (this._adding = false)}
            ></memory-editor>
          </section>`
        : nothing}
      ${this._importing
        ? html`<memory-import-dialog
            .hass=${this.hass}
            @close=${() => (this._importing = false)}
          ></memory-import-dialog>`
        : nothing}
    `;
  }

  _memoryList() {
    const count = this._selected.size;
    return html`
      ${count
        ? html`<div class="bulk" role="toolbar" aria-label=${this.t("selected", { count })}>
            <span>${this.t("selected", { count })}</span>
            <button class="more" @click=${() => this._actOnSelected("memory/forget")}>${this.t("forget")}</button>
            <button class="more" @click=${() => this._actOnSelected("memory/restore")}>${this.t("restore")}</button>
            <button class="more danger" @click=${() => this._actOnSelected("memory/forget", true)}>
              ${this.t("purge")}
            </button>
            <button class="link" @click=${() => (this._selected = new Set())}>${this.t("clearSelection")}</button>
          </div>`
        : nothing}
      ${this._notice ? html`<p class="notice" role="status">${this._notice}</p>` : nothing}
      <p class="count" aria-live="polite">
        ${this._list.loading && !this._list.rows.length
          ? this.t("loading")
          : this._list.rows.length
            ? this.t("shown", { shown: this._list.rows.length, total: this._list.total })
            : this.t("none")}
      </p>
      <ul class="list">
        ${repeat(
          this._list.rows,
          (memory) => memory.id,
          (memory) => this._row(memory),
        )}
      </ul>
      ${this._list.cursor
        ? html`<button class="more" @click=${() => this._load(true)}>${this.t("more")}</button>`
        : nothing}
    `;
  }

  _row(memory) {
    return html`<li class="row">
      <input
        type="checkbox"
        .checked=${this._selected.has(memory.id)}
        @change=${(e) => this._toggle(memory.id, e)}
        aria-label=${this.t("select", { id: memory.id })}
      />
      <button
        class="memory ${memory.status}"
        @click=${() => this._show(memory.id)}
        aria-label=${`#${memory.id}: ${memory.content}`}
      >
        <span class="content">${memory.content}</span>
        <span class="meta">
          <span class="chip ${memory.household ? "house" : "person"}">${memory.owner}</span>
          <span>${this.t(`type_${memory.type}`)}</span>
          <span>${this._date(memory.created_at)}</span>
          ${memory.tags.map((tag) => html`<span class="chip">#${tag}</span>`)}
          ${memory.status !== "active" ? html`<span class="chip">${this.t(memory.status)}</span>` : nothing}
        </span>
      </button>
    </li>`;
  }

  static styles = panelStyles;
}

if (!customElements.get("memory-panel")) customElements.define("memory-panel", MemoryPanel);
