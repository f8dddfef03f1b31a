// A paged list that stays where the person left it when something changes.
//
// A live update (memory/subscribe: digestion, another device, a re-embedding
// batch) reads the list again as deep as it was shown, page by page, instead
// of falling back to its first page: the rows below the first 50, the scroll
// position and the selection stay. Only the selected rows that are no longer
// in the list are unselected, and the panel says how many.

// Read `message` (a paged websocket command) again until as many rows as
// the list shows (`shown()`, asked after each page: a *Show more* may land
// meanwhile; at least one page) are back, or the list ends. `current()`
// tells whether this is still the newest read; when it is not, the answer
// is null.
export async function rereadPages(hass, message, key, shown, page, current) {
  const rows = [];
  let cursor = null;
  let total = 0;
  do {
    const reply = await hass.callWS(cursor ? { ...message, cursor } : message);
    if (!current()) return null;
    rows.push(...reply[key]);
    cursor = reply.cursor;
    total = reply.total;
  } while (cursor && rows.length < Math.max(page, shown()));
  return { rows, cursor, total };
}

// `rows` followed by those of `more` that are not among them (a page read
// after a live update may repeat a row the update already brought).
export function appended(rows, more) {
  const have = new Set(rows.map((row) => row.id));
  return [...rows, ...more.filter((row) => !have.has(row.id))];
}

// The selected ids that are still among `rows`, and how many are not.
export function keptSelection(selected, rows) {
  const present = new Set(rows.map((row) => row.id));
  const kept = new Set([...selected].filter((id) => present.has(id)));
  return { kept, dropped: selected.size - kept.size };
}

// What a list shows after a re-read (`found`) while it showed `rows` up to
// `cursor`: the re-read rows, and when a *Show more* page landed during the
// re-read (the list went deeper than the re-read did), the rows below too,
// with that page's cursor.
export function afterReread(found, rows, cursor) {
  if (!found.cursor || rows.length <= found.rows.length) {
    return { rows: found.rows, cursor: found.cursor };
  }
  return { rows: appended(found.rows, rows.slice(found.rows.length)), cursor };
}
