// The panel's words, by language; English is the fallback for every key.
// Add a language by adding an object with the same keys.
export const STRINGS = {
  en: {
    title: "Memory",
    menu: "Menu",
    search: "Search memories",
    searchHint: "Type to search by words and meaning",
    everyone: "Everyone I may see",
    household: "Household",
    status: "Status",
    active: "Active",
    expiring: "Expiring",
    archived: "Forgotten",
    superseded: "Replaced",
    any: "Any",
    order: "Order",
    relevance: "Best match",
    newest: "Newest",
    recalled: "Most recalled",
    owner: "Whose",
    shown: "{shown} of {total}",
    more: "Show more",
    none: "No memories here yet.",
    loading: "Loading…",
    close: "Close",
    add: "Add",
    edit: "Edit",
    save: "Save",
    cancel: "Cancel",
    text: "Text",
    overview: "Overview",
    health:
      "Database {size} MB · search by {search} · {waiting} conversations waiting for digestion · AI Task {calls} of {cap} calls in the last hour",
    keywordOnly: "keywords only",
    profiles: "Profiles",
    noProfiles: "No profile written yet.",
    refresh: "Refresh now",
    forget: "Forget",
    restore: "Restore",
    purge: "Erase for good",
    purgeConfirm:
      "Erase this memory for good? Its text, its vectors and every copy in the database and the exports are removed; it cannot be restored.",
    created: "Created",
    updated: "Updated",
    expires: "Expires",
    recalledTimes: "Recalled",
    lastRecalled: "Last recalled",
    never: "never",
    type: "Type",
    tags: "Tags",
    origin: "Came from",
    conversation: "Conversation",
    replaced: "It replaced",
    replacedBy: "Replaced by",
    error: "Something went wrong: {error}",
  },
};

export function translate(language, key, values = {}) {
  const table = STRINGS[language?.split("-")[0]] ?? STRINGS.en;
  let text = table[key] ?? STRINGS.en[key] ?? key;
  for (const [name, value] of Object.entries(values)) {
    text = text.replace(`{${name}}`, String(value));
  }
  return text;
}
