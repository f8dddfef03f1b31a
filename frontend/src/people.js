// What several parts of the panel read from `hass`: the persons one may
// pick, and a date in the user's language.

// The persons Home Assistant knows: `{id: "person.anna", name: "Anna"}`.
export function persons(hass) {
  return Object.values(hass?.states ?? {})
    .filter((state) => state.entity_id.startsWith("person."))
    .map((state) => ({
      id: state.entity_id,
      name: state.attributes.friendly_name ?? state.entity_id,
    }));
}

// A stored time as the user reads dates; `never` when there is none.
export function dateText(hass, value, never) {
  if (!value) return never;
  return new Date(value).toLocaleString(hass?.locale?.language ?? undefined);
}
