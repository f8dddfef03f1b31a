// The Memory panel's Conversations view: the captured conversations by day.
//
// Each with who spoke, to which agent, on which device, where digestion is
// (waiting, done, skipped and why, failed and why) and how many memories it
// gave. One opens to read (at a message, when opened from a memory), digest
// now, or erase for good. Talks only to memory/conversations,
// memory/conversation, memory/digest_conversation and
// memory/erase_conversation, which apply the user's reach.

import { LitElement, html, nothing } from "lit";
import { PAGE, PagedList } from "./live-list.js";
import { known, translate } from "./strings.js";
import { partStyles } from "./styles.js";


export class MemoryConversations extends LitElement {
  static properties = {
    hass: { attribute: false },
    narrow: { type: Boolean },
    _status: { state: true },
    _open: { state: true },
    _busy: { state: true },
    _error: { state: true },
  };

  constructor() {
    super();
    // The conversations the status filter asks for (live-list.js).
    this._list = new PagedList(this, {
      key: "conversations",
      message: () => this._message(),
      fail: (err) => this._fail(err),
    });
    this._status = "";
    this._open = null;
    this._busy = false;
    this._error = "";
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  _fail(err) {
    this._error = err?.message ?? String(err);
  }

  firstUpdated() {
    this._load(false);
  }

  // Called by the panel when something changed (memory/subscribe): the list
  // as deep as it is shown, and the open conversation as it is now.
  async reload() {
    if (await this._list.reread()) this._error = "";
    if (this._open) await this._reopen();
  }

  _message() {
    const message = { type: "memory/conversations", limit: PAGE };
    if (this._status) message.statuses = [this._status];
    return message;
  }

  async _load(more) {
    if (await this._list.load(more)) this._error = "";
  }

  // Open one: by its row, or (from a memory) by the memory it gave.
  async show(which) {
    try {
      this._open = await this.hass.callWS({ type: "memory/conversation", ...which });
      this._error = "";
      await this.updateComplete;
      const at = this.renderRoot.querySelector(".message.at");
      at?.scrollIntoView({ block: "center" });
      at?.focus();
    } catch (err) {
      this._fail(err);
    }
  }

  async _reopen() {
    const id = this._open.conversation.id;
    try {
      const fresh = await this.hass.callWS({ type: "memory/conversation", conversation: id });
      if (this._open?.conversation.id === id) this._open = fresh;
    } catch {
      if (this._open?.conversation.id === id) this._open = null; // erased meanwhile
    }
  }

  async _digest() {
    this._busy = true;
    try {
      await this.hass.callWS({
        type: "memory/digest_conversation",
        conversation: this._open.conversation.id,
      });
      await this._reopen();
      await this._load(false);
    } catch (err) {
      this._fail(err);
    } finally {
      this._busy = false;
    }
  }

  async _erase() {
    if (!window.confirm(this.t("eraseConversationConfirm"))) return;
    try {
      await this.hass.callWS({
        type: "memory/erase_conversation",
        conversation: this._open.conversation.id,
      });
      this._open = null;
      await this._load(false);
    } catch (err) {
      this._fail(err);
    }
  }

  _openMemory(id) {
    this.dispatchEvent(new CustomEvent("open-memory", { detail: { id }, bubbles: true, composed: true }));
  }

  _day(value) {
    return new Date(value).toLocaleDateString(this.hass?.locale?.language ?? undefined, {
      weekday: "long",
      year: "numeric",
      month: "long",
      day: "numeric",
    });
  }

  _time(value) {
    return new Date(value).toLocaleTimeString(this.hass?.locale?.language ?? undefined, {
      hour: "2-digit",
      minute: "2-digit",
    });
  }

  _state(conversation) {
    const reason = conversation.reason;
    const why = reason ? (known(`reason_${reason}`) ? this.t(`reason_${reason}`) : reason) : "";
    const text = why ? `${this.t(`state_${conversation.status}`)}: ${why}` : this.t(`state_${conversation.status}`);
    return html`<span class="chip state ${conversation.status}">${text}</span>`;
  }

  render() {
    if (!this.hass) return nothing;
    const days = [];
    for (const conversation of this._list.rows) {
      const day = this._day(conversation.started_at);
      if (!days.length || days.at(-1).day !== day) days.push({ day, items: [] });
      days.at(-1).items.push(conversation);
    }
    return html`
      <div class="filters conversation-filters">
        <label>
          <span>${this.t("digestion")}</span>
          <select
            @change=${(e) => {
              this._status = e.target.value;
              this._load(false);
            }}
          >
            <option value="">${this.t("any")}</option>
            ${["waiting", "done", "skipped", "failed"].map(
              (status) => html`<option value=${status}>${this.t(`state_${status}`)}</option>`,
            )}
          </select>
        </label>
      </div>
      ${this._error ? html`<p class="error" role="alert">${this.t("error", { error: this._error })}</p>` : nothing}
      <p class="count" aria-live="polite">
        ${this._list.loading && !this._list.rows.length
          ? this.t("loading")
          : this._list.rows.length
            ? this.t("conversationsShown", { shown: this._list.rows.length, total: this._list.total })
            : this.t("noConversations")}
      </p>
      ${days.map(
        ({ day, items }) => html`<h3 class="day">${day}</h3>
          <ul class="list">
            ${items.map((conversation) => this._row(conversation))}
          </ul>`,
      )}
      ${this._list.cursor ? html`<button class="more" @click=${() => this._load(true)}>${this.t("more")}</button>` : nothing}
      ${this._open ? this._detail(this._open) : nothing}
    `;
  }

  _row(conversation) {
    return html`<li>
      <button
        class="memory"
        @click=${() => this.show({ conversation: conversation.id })}
        aria-label=${this.t("conversationLabel", {
          time: this._time(conversation.started_at),
          speaker: conversation.speaker,
          preview: conversation.preview,
        })}
      >
        <span class="content">${conversation.preview || this.t("noWords")}</span>
        <span class="meta">
          <span>${this._time(conversation.started_at)}</span>
          <span class="chip ${conversation.scope === "household" ? "house" : "person"}">${conversation.speaker}</span>
          ${conversation.agent ? html`<span>${conversation.agent}</span>` : nothing}
          ${conversation.device ? html`<span>${conversation.device}</span>` : nothing}
          ${this._state(conversation)}
          <span>${this.t("messagesCount", { count: conversation.messages })}</span>
          ${conversation.produced
            ? html`<span>${this.t("producedCount", { count: conversation.produced })}</span>`
            : nothing}
        </span>
      </button>
    </li>`;
  }

  _detail({ conversation, messages, memories, message_id: at }) {
    const field = (label, value) => html`<dt>${label}</dt><dd>${value}</dd>`;
    return html`<section class="detail" role="dialog" aria-label=${this.t("conversation")}>
      <header>
        <h2>${this.t("conversation")}</h2>
        <button @click=${() => (this._open = null)} aria-label=${this.t("close")}>✕</button>
      </header>
      <dl>
        ${field(this.t("speaker"), conversation.speaker)}
        ${conversation.agent ? field(this.t("agent"), conversation.agent) : nothing}
        ${conversation.device ? field(this.t("device"), conversation.device) : nothing}
        ${field(this.t("started"), `${this._day(conversation.started_at)} ${this._time(conversation.started_at)}`)}
        ${field(this.t("digestion"), this._state(conversation))}
        ${conversation.retry_at
          ? field(this.t("retryAt"), `${this._day(conversation.retry_at)} ${this._time(conversation.retry_at)}`)
          : nothing}
      </dl>
      <ol class="messages">
        ${messages.map(
          (message) => html`<li
            class="message ${message.role} ${message.id === at ? "at" : ""}"
            tabindex=${message.id === at ? "0" : "-1"}
            aria-current=${message.id === at ? "true" : "false"}
          >
            <span class="who">${message.role === "user" ? message.speaker : this.t(`role_${message.role}`)}</span>
            <span class="said">${message.content || (message.tool_name ? `(${message.tool_name})` : "")}</span>
          </li>`,
        )}
      </ol>
      <h3>${this.t("gave")}</h3>
      ${memories.length
        ? html`<ul class="chain">
            ${memories.map(
              (memory) => html`<li>
                <button class="link" @click=${() => this._openMemory(memory.id)}>#${memory.id} ${memory.content}</button>
              </li>`,
            )}
          </ul>`
        : html`<p class="count chain">${this.t("gaveNothing")}</p>`}
      <div class="actions">
        <button @click=${this._digest} ?disabled=${this._busy}>${this._busy ? this.t("digesting") : this.t("digestNow")}</button>
        <button class="danger" @click=${this._erase}>${this.t("eraseConversation")}</button>
      </div>
    </section>`;
  }

  static styles = partStyles;
}

if (!customElements.get("memory-conversations")) customElements.define("memory-conversations", MemoryConversations);
