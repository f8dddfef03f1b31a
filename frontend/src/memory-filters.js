// The memory list's question: the search box and the filters in the header.
//
// `MemoryFilters` is a Lit reactive controller of the panel: the search text
// (asked a quarter second after typing stops), whose, type, status, where a
// memory came from, a tag, a date range and the order (newest or recalled;
// a search orders by relevance). `message()` is the memory/browse command
// for what they say now; `render()` draws them in the panel's own header
// (its styles apply), folded behind a Filters button at phone width. Each
// change calls `changed()`, which asks the list anew.

import { html, nothing } from "lit";
import { PAGE } from "./live-list.js";
import { persons } from "./people.js";

const TYPING_PAUSE_MS = 250;
const TYPES = ["fact", "preference", "instruction", "event", "summary", "profile", "other"];
const ORIGINS = ["tool", "digestion", "action", "import"];

export class MemoryFilters {
  // `changed()`: the host's reaction to a new question (it loads the list).
  constructor(host, { changed }) {
    this.host = host;
    this.changed = changed;
    this.query = "";
    this.person = "";
    this.status = "active";
    this.order = "newest";
    this.type = "";
    this.tag = "";
    this.origin = "";
    this.since = "";
    this.until = "";
    this.open = false; // the filters unfolded at phone width
    this._typing = undefined;
    host.addController(this);
  }

  t(key, values) {
    return this.host.t(key, values);
  }

  // The memory/browse command for what the filters and the search say now.
  message() {
    const message = {
      type: "memory/browse",
      status: this.status,
      limit: PAGE,
      order: this.query.trim() ? "relevance" : this.order,
    };
    if (this.query.trim()) message.query = this.query.trim();
    if (this.person) message.person = this.person;
    if (this.type) message.types = [this.type];
    if (this.tag.trim()) message.tags = [this.tag.trim()];
    if (this.origin) message.origins = [this.origin];
    if (this.since) message.since = new Date(`${this.since}T00:00`).toISOString();
    if (this.until) {
      const end = new Date(`${this.until}T00:00`);
      end.setDate(end.getDate() + 1); // the whole last day
      message.until = end.toISOString();
    }
    return message;
  }

  _typed(event) {
    this.query = event.target.value;
    this.host.requestUpdate();
    clearTimeout(this._typing);
    this._typing = setTimeout(() => this.changed(), TYPING_PAUSE_MS);
  }

  _chose(field, event) {
    this[field] = event.target.value;
    this.host.requestUpdate();
    this.changed();
  }

  _toggleOpen() {
    this.open = !this.open;
    this.host.requestUpdate();
  }

  // How many filters differ from what the panel starts with.
  _active() {
    const changed = [this.person, this.type, this.origin, this.tag.trim(), this.since, this.until];
    return changed.filter(Boolean).length + (this.status === "active" ? 0 : 1);
  }

  _select(label, field, options, ariaLabel = label) {
    return html`<label>
      <span>${label}</span>
      <select @change=${(e) => this._chose(field, e)} aria-label=${ariaLabel}>
        ${options.map(
          ([value, text]) => html`<option value=${value} ?selected=${value === this[field]}>${text}</option>`,
        )}
      </select>
    </label>`;
  }

  // The search box and the filters; `narrow`: phone width.
  render(narrow) {
    return html`<input
        type="search"
        .value=${this.query}
        @input=${(e) => this._typed(e)}
        placeholder=${this.t("searchHint")}
        aria-label=${this.t("search")}
      />
      ${narrow
        ? html`<button class="add" aria-expanded=${this.open ? "true" : "false"} @click=${() => this._toggleOpen()}>
            ${this.t("filters", { count: this._active() })}
          </button>`
        : nothing}
      <div class="filters" ?hidden=${narrow && !this.open}>
        ${this._select(this.t("owner"), "person", [
          ["", this.t("everyone")],
          ["household", this.t("household")],
          ...persons(this.host.hass).map((person) => [person.id, person.name]),
        ])}
        ${this._select(this.t("type"), "type", [
          ["", this.t("any")],
          ...TYPES.map((kind) => [kind, this.t(`type_${kind}`)]),
        ])}
        ${this._select(
          this.t("status"),
          "status",
          ["active", "expiring", "archived", "superseded", "any"].map((status) => [status, this.t(status)]),
        )}
        ${this._select(this.t("origin"), "origin", [
          ["", this.t("any")],
          ...ORIGINS.map((origin) => [origin, this.t(`origin_${origin}`)]),
        ])}
        <label>
          <span>${this.t("tag")}</span>
          <input
            .value=${this.tag}
            @change=${(e) => this._chose("tag", e)}
            aria-label=${this.t("tag")}
            placeholder=${this.t("tagHint")}
          />
        </label>
        <label>
          <span>${this.t("from")}</span>
          <input type="date" .value=${this.since} @change=${(e) => this._chose("since", e)} aria-label=${this.t("from")} />
        </label>
        <label>
          <span>${this.t("to")}</span>
          <input type="date" .value=${this.until} @change=${(e) => this._chose("until", e)} aria-label=${this.t("to")} />
        </label>
        <label>
          <span>${this.t("order")}</span>
          <select @change=${(e) => this._chose("order", e)} aria-label=${this.t("order")} ?disabled=${Boolean(this.query.trim())}>
            ${["newest", "recalled"].map(
              (order) => html`<option value=${order} ?selected=${order === this.order}>${this.t(order)}</option>`,
            )}
          </select>
        </label>
      </div>`;
  }
}
