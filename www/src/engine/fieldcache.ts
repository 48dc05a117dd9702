// A cache of each source's title and description (src/lib/rows.ts `noteFields`), keyed by
// the source hash, in the page's own IndexedDB database (`<database>:fields`, beside the
// package's). A hash names one text forever, so an entry is never stale; the next open reads
// 20,000 titles from here in one request instead of reading and parsing 20,000 sources.
// Losing it costs only time: everything in it is recomputed from the store.

import type { NoteFields } from '../lib/rows.js';

interface Entry extends NoteFields {
  hash: string;
}

const STORE = 'fields';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

export class FieldCache {
  private db: Promise<IDBDatabase | null>;

  constructor(database: string) {
    this.db = new Promise((resolve) => {
      try {
        const r = indexedDB.open(`${database}:fields`, 1);
        r.onupgradeneeded = () => r.result.createObjectStore(STORE, { keyPath: 'hash' });
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => resolve(null);
        r.onblocked = () => resolve(null);
      } catch {
        resolve(null);
      }
    });
  }

  /** Every cached entry, by hash. */
  async all(): Promise<Map<string, NoteFields>> {
    const db = await this.db;
    if (!db) return new Map();
    try {
      const list = (await request(db.transaction(STORE, 'readonly').objectStore(STORE).getAll())) as Entry[];
      return new Map(list.map(({ hash, title, description, hasFrontmatter }) => [hash, { title, description, hasFrontmatter }]));
    } catch {
      return new Map();
    }
  }

  /** Adds entries; drops, when asked, every entry whose hash is not in `keep`. Failures are ignored. */
  async put(entries: Array<[string, NoteFields]>, keep?: Set<string>): Promise<void> {
    const db = await this.db;
    if (!db) return;
    try {
      const tx = db.transaction(STORE, 'readwrite');
      const os = tx.objectStore(STORE);
      for (const [hash, f] of entries) os.put({ hash, ...f });
      if (keep) {
        const keys = (await request(os.getAllKeys())) as string[];
        for (const k of keys) if (!keep.has(k)) os.delete(k);
      }
      await new Promise<void>((resolve) => {
        tx.oncomplete = () => resolve();
        tx.onabort = () => resolve();
        tx.onerror = () => resolve();
      });
    } catch {
      // A cache: the titles are read from the store next time.
    }
  }
}
