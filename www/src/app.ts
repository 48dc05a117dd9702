// The page's state: one connection to the tenant (langonrock's `open` on its IndexedDB store),
// the manifest and the source listing it last read, and what the page learnt from saves
// (diagnostics). `refresh()` re-reads after any commit, ours or another tab's; views listen
// to the `data` event.

import type { Connection, Diagnostic, IndexedDbTenantStore, SnapshotInfo, SourceEntry } from 'langonrock';
import { parseManifest, type Manifest, type Row } from './lib/tsv.js';
import { indexDocuments, type Documents } from './lib/links.js';
import { RevisionReader } from './lib/revisions.js';

export interface Section {
  name: string;
  start: number;
  end: number;
}

export class App extends EventTarget {
  manifest: Manifest = { tenant: '', bundles: [], rows: [], text: '' };
  rows = new Map<string, Row>();
  backlinks = new Map<string, string[]>();
  entries: SourceEntry[] = [];
  docs: Documents = indexDocuments([]);
  snapshot: SnapshotInfo = { snapshot: '', concepts: 0 };
  readonly reader: RevisionReader;
  /** `<bundle>\n<path>` → the diagnostics the last save or import reported for it. */
  private diagnostics = new Map<string, Diagnostic[]>();
  private refreshing: Promise<void> | null = null;
  private again = false;

  constructor(
    readonly conn: Connection,
    readonly tenantStore: IndexedDbTenantStore,
    readonly tenant: string,
    readonly database: string,
  ) {
    super();
    this.reader = new RevisionReader(tenantStore);
    // Another tab (or this one) moved the head: read again. The connection itself refreshes
    // before every read (engine.md §8.1), so the reads below see the new head.
    tenantStore.onHeadChange(() => {
      void this.refresh('elsewhere');
    });
  }

  /** Re-reads the manifest, the listing and the snapshot; calls coalesce. */
  refresh(cause: 'local' | 'elsewhere' = 'local'): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          const [text, entries, snapshot] = await Promise.all([this.conn.manifest(), this.conn.listSource(), this.conn.snapshot()]);
          this.load(text, entries, snapshot);
          this.dispatchEvent(new CustomEvent('data', { detail: { cause } }));
        } while (this.again);
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private load(text: string, entries: SourceEntry[], snapshot: SnapshotInfo): void {
    this.manifest = parseManifest(text);
    this.rows = new Map(this.manifest.rows.map((r) => [r.id, r]));
    const back = new Map<string, string[]>();
    for (const r of this.manifest.rows) {
      for (const l of r.links) {
        let list = back.get(l);
        if (!list) back.set(l, (list = []));
        list.push(r.id);
      }
    }
    this.backlinks = back;
    this.entries = entries;
    this.docs = indexDocuments(entries);
    this.snapshot = snapshot;
  }

  /** The bundles, including those holding only navigation documents. */
  get bundles(): string[] {
    return this.manifest.bundles;
  }

  entry(bundle: string, path: string): SourceEntry | undefined {
    return this.docs.byPath.get(`${bundle}\n${path}`);
  }

  /** Keeps the diagnostics a save reported for one document. */
  noteDiagnostics(bundle: string, path: string, list: Diagnostic[]): void {
    this.diagnostics.set(`${bundle}\n${path}`, list);
  }

  /** Keeps the diagnostics of a whole-tenant result (a transact or a restore). */
  noteTenantDiagnostics(list: Diagnostic[]): void {
    this.diagnostics.clear();
    for (const d of list) {
      const key = `${d.bundle}\n${d.path}`;
      const l = this.diagnostics.get(key);
      if (l) l.push(d);
      else this.diagnostics.set(key, [d]);
    }
    for (const e of this.entries) if (!this.diagnostics.has(`${e.bundle}\n${e.path}`)) this.diagnostics.set(`${e.bundle}\n${e.path}`, []);
  }

  /** The diagnostics last reported for a document, or undefined when none were reported yet. */
  diagnosticsOf(bundle: string, path: string): Diagnostic[] | undefined {
    return this.diagnostics.get(`${bundle}\n${path}`);
  }

  /**
   * A concept's sections in table order with their ranges in `body`. The names come from the
   * engine (the `get` tool names them when asked for a section that no concept has: `-` can
   * never be a section name), each section's text from `get(ids, {section})`; sections start
   * at distinct heading lines in document order, so each one is found in the body after the
   * previous one's start.
   */
  async sections(id: string, body: string): Promise<Section[]> {
    const answer = await this.conn.callTool('get', { ids: [id], section: '-' });
    const line = answer.text.split('\n')[0];
    const marker = ' no section "-": ';
    const at = line.indexOf(marker);
    if (answer.isError || at < 0) return [];
    const names = line.slice(at + marker.length);
    if (names === '-') return [];
    const list = names.split(' ');
    const slices = await Promise.all(list.map((name) => this.conn.get([id], { section: name })));
    const out: Section[] = [];
    let from = -1;
    list.forEach((name, i) => {
      const s = slices[i].get(id);
      if (!s) return;
      const start = name === 'body' && from < 0 ? 0 : body.indexOf(s.text, from + 1);
      if (start < 0) return;
      from = start;
      out.push({ name, start, end: start + s.text.length });
    });
    return out;
  }
}

/** `CODE: message` for an error of the package, the message for anything else. */
export function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && 'message' in error) return `${String(error.code)}: ${String(error.message)}`;
  return error instanceof Error ? error.message : String(error);
}
