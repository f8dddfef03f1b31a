// The panel's styles, shared by its views: Home Assistant's theme variables
// only, so light and dark themes (and a user's own theme) apply.

import { css } from "lit";

export const panelStyles = css`
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
    [hidden] {
      display: none !important;
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
    select,
    textarea,
    .editor input,
    .filters input {
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
    .notice {
      margin: 8px 0;
      color: var(--primary-text-color);
      font-size: 14px;
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

    .tabs {
      display: flex;
      gap: 4px;
      flex: 1 0 100%;
    }
    .tabs button {
      padding: 6px 14px;
      border: none;
      border-bottom: 2px solid transparent;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
      opacity: 0.8;
    }
    .tabs button[aria-selected="true"] {
      border-bottom-color: currentColor;
      opacity: 1;
    }
    .row {
      display: flex;
      gap: 8px;
      align-items: stretch;
    }
    .row input[type="checkbox"] {
      width: 20px;
      height: 20px;
      margin: 14px 0 0;
      flex: 0 0 auto;
      accent-color: var(--primary-color);
    }
    .bulk {
      position: sticky;
      top: 0;
      z-index: 1;
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: center;
      padding: 8px 12px;
      border-radius: 12px;
      background: var(--secondary-background-color);
    }
    .bulk button {
      margin: 0;
    }
    .filters input {
      font: inherit;
      font-size: 14px;
      max-width: 150px;
    }
    .day {
      font-size: 14px;
      font-weight: 500;
      color: var(--secondary-text-color);
      margin: 16px 0 8px;
    }
    .state.failed {
      background: var(--error-color);
      color: var(--text-primary-color);
    }
    .state.done {
      background: var(--success-color, #43a047);
      color: var(--text-primary-color);
    }
    .state.waiting {
      background: var(--warning-color, #ffa600);
      color: var(--text-primary-color);
    }
    .messages {
      list-style: none;
      margin: 12px 16px;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .message {
      padding: 8px 10px;
      border-radius: 10px;
      background: var(--secondary-background-color);
      display: grid;
      gap: 2px;
      overflow-wrap: anywhere;
    }
    .message.user {
      background: var(--card-background-color);
      border: 1px solid var(--divider-color);
    }
    .message.tool_result {
      font-size: 12px;
      opacity: 0.8;
    }
    .message.at {
      outline: 2px solid var(--primary-color);
    }
    .message .who {
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .actions button:disabled {
      opacity: 0.6;
      cursor: progress;
    }
`;

// A part of the panel in its own element (the Conversations view, an opened
// memory, the editor, the overview, the Import dialog): the panel's styles,
// without the page-filling host.
export const partStyles = [
  panelStyles,
  css`
    :host {
      min-height: 0;
      background: transparent;
    }
  `,
];
