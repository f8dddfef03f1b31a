// The panel's overview: how many memories one may see are active,
// expiring, forgotten or replaced; the household's and one's own profile,
// each with Refresh now; and the system's health, as the sensors show it
// (memory/overview, memory/refresh_profile, within the user's reach). The
// panel calls `reload()` on a live update; a failure is told as `failed`.

import { LitElement, html, nothing } from "lit";
import { translate } from "./strings.js";
import { partStyles } from "./styles.js";

export class MemoryOverview extends LitElement {
  static properties = {
    hass: { attribute: false },
    _overview: { state: true },
  };

  constructor() {
    super();
    this._overview = null;
  }

  t(key, values) {
    return translate(this.hass?.locale?.language ?? this.hass?.language, key, values);
  }

  firstUpdated() {
    this._loadOverview();
  }

  reload() {
    this._loadOverview();
  }

  async _loadOverview() {
    try {
      this._overview = await this.hass.callWS({ type: "memory/overview" });
    } catch (err) {
      this.dispatchEvent(new CustomEvent("failed", { detail: err, bubbles: true, composed: true }));
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
      this.dispatchEvent(new CustomEvent("failed", { detail: err, bubbles: true, composed: true }));
    }
  }

  render() {
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
        ${health.embedding
          ? html`<br />${this.t("embedding", {
                provider: health.embedding.provider,
                model: health.embedding.model,
                progress: Math.round(health.embedding.progress),
                pending: health.embedding.pending,
                state: this.t(health.embedding.connected ? "connected" : "unreachable"),
              })}`
          : nothing}
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

  static styles = partStyles;
}

if (!customElements.get("memory-overview")) customElements.define("memory-overview", MemoryOverview);
