// A paged list that stays where the person left it when something changes.
//
// `PagedList` is a Lit reactive controller: the rows of a paged websocket
// command (memory/browse, memory/conversations) shown 50 at a time, its
// total and the next page's cursor. `load()` asks a new question (a filter,
// the search), `load(true)` the next page; `reread()` answers a live update
// (memory/subscribe: digestion, another device, a re-embedding batch) by
// reading the list again as deep as it is shown, page by page, instead of
// falling back to its first page: the rows below the first 50 and the
// scroll position stay. A newer question outdates every read of an older
// one, and a re-read the reads before it; a Show more page that lands
// during a re-read is kept. `keptSelection` tells the panel which ticked
// rows are still listed.

// Rows a page holds (the websocket API's largest page).
export const PAGE = 50;

// Read `message` (a paged websocket command) again until as many rows as
// the list shows (`shown()`, asked after each page: a *Show more* may land
// meanwhile; at least one page) are back, or the list ends. `current()`
// tells whether this is still the newest read; when it is not, the answer
// is null.
async function rereadPages(hass, message, key, shown, current) {
  const rows = [];
  let cursor = null;
  let total = 0;
  do {
    const reply = await hass.callWS(cursor ? { ...message, cursor } : message);
    if (!current()) return null;
    rows.push(...reply[key]);
    cursor = reply.cursor;
    total = reply.total;
  } while (cursor && rows.length < Math.max(PAGE, shown()));
  return { rows, cursor, total };
}

// `rows` followed by those of `more` that are not among them (a page read
// after a live update may repeat a row the update already brought).
function appended(rows, more) {
  const have = new Set(rows.map((row) => row.id));
  return [...rows, ...more.filter((row) => !have.has(row.id))];
}

// What a list shows after a re-read (`found`) while it showed `rows` up to
// `cursor`: the re-read rows, and when a *Show more* page landed during the
// re-read (the list went deeper than the re-read did), the rows below too,
// with that page's cursor.
function afterReread(found, rows, cursor) {
  if (!found.cursor || rows.length <= found.rows.length) {
    return { rows: found.rows, cursor: found.cursor };
  }
  return { rows: appended(found.rows, rows.slice(found.rows.length)), cursor };
}

export class PagedList {
  // `key`: the reply's list ("memories"); `message()`: the command for the
  // question asked now (its `limit` PAGE); `fail(err)`: the host's error.
  constructor(host, { key, message, fail }) {
    this.host = host;
    this.key = key;
    this.message = message;
    this.fail = fail;
    this.rows = [];
    this.total = 0;
    this.cursor = null;
    this.loading = false;
    this._question = 0;
    this._asked = 0;
    host.addController(this);
  }

  _set(changes) {
    Object.assign(this, changes);
    this.host.requestUpdate();
  }

  // A new question, or with `more` its next page. Whether the answer was
  // taken (false: a newer question or read is under way, or it failed).
  async load(more = false) {
    const question = more ? this._question : ++this._question;
    const asked = more ? this._asked : ++this._asked;
    const current = () => question === this._question && (more || asked === this._asked);
    const message = this.message();
    if (more && this.cursor) message.cursor = this.cursor;
    this._set({ loading: true });
    try {
      const page = await this.host.hass.callWS(message);
      if (!current()) return false;
      const rows = more ? appended(this.rows, page[this.key]) : page[this.key];
      this._set({ rows, total: page.total, cursor: page.cursor });
      return true;
    } catch (err) {
      if (current()) this.fail(err);
      return false;
    } finally {
      if (current()) this._set({ loading: false });
    }
  }

  // Something changed elsewhere: the same question, as deep as it is shown.
  // Whether the answer was taken.
  async reread() {
    const question = this._question;
    const asked = ++this._asked;
    const current = () => question === this._question && asked === this._asked;
    try {
      const found = await rereadPages(
        this.host.hass,
        this.message(),
        this.key,
        () => this.rows.length,
        current,
      );
      if (!found) return false;
      this._set({ ...afterReread(found, this.rows, this.cursor), total: found.total });
      return true;
    } catch (err) {
      if (current()) this.fail(err);
      return false;
    }
  }
}

// The selected ids that are still among `rows`, and how many are not.
export function keptSelection(selected, rows) {
  const present = new Set(rows.map((row) => row.id));
  const kept = new Set([...selected].filter((id) => present.has(id)));
  return { kept, dropped: selected.size - kept.size };
}
