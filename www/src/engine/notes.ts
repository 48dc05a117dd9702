// The notes as the engine worker holds them: one langonrock connection on the package's
// IndexedDB store, the rows it last read (through src/lib/rows.ts), the titles, backlinks and
// diagnostics the page shows, and every view model the page asks for. All of it runs in the
// worker (src/engine/worker.ts), so opening, searching, rendering and committing never block
// the page; the page receives only what it draws.

import type { Connection, Diagnostic, IndexedDbTenantStore, LinkTargets, ManifestRows, SnapshotInfo, SourceEntry, RevisionResult } from 'langonrock';
import { linkTargets } from 'langonrock';
import { zipSync } from 'fflate';
import type { Row } from 'langonrock';
import { outlineOf } from '../lib/rows.js';
import { render, cutAt, lineOf, linkUses, type LinkContext } from '../lib/markdown.js';
import { split } from '../lib/frontmatter.js';
import { RevisionReader } from '../lib/revisions.js';
import { occurrences, cluster, passage, queryWords, sentence } from '../lib/passage.js';
import type {
  AgentModel,
  Backlink,
  BundleListing,
  BundleSummary,
  ConceptModel,
  DocumentModel,
  Marked,
  NoteHistoryPage,
  NoteRef,
  NoteVersion,
  PreviewModel,
  RevisionModel,
  SearchAnswer,
  SearchHit,
  Summary,
} from './types.js';

/** Rendered at once; a longer note renders the rest when asked (src/views/concept.ts). */
export const RENDER_LIMIT = 100_000;
const READ_BATCH = 500;
const BACKLINKS_READ = 40;
/** Hits whose `pos` is below this share one read of their bodies' starts. */
const NEAR = 8_000;
const CONTEXTS_PER_BACKLINK = 3;
/**
 * The part of a hit's body after its `pos` that the results list reads its passage from: the
 * window `pos` was computed for, with the densest cluster of the query's words in its middle
 * (docs/search.md, "Expansion, `pos`, output").
 */
const WINDOW = 2000;

const key = (bundle: string, path: string) => `${bundle}\n${path}`;

/** The listed documents by `<bundle>\n<path>` and by public id. */
interface Documents {
  byPath: Map<string, SourceEntry>;
  byId: Map<string, SourceEntry>;
}

function indexDocuments(entries: SourceEntry[]): Documents {
  const byPath = new Map<string, SourceEntry>();
  const byId = new Map<string, SourceEntry>();
  for (const e of entries) {
    byPath.set(key(e.bundle, e.path), e);
    if (e.id !== undefined) byId.set(e.id, e);
  }
  return { byPath, byId };
}

interface Name {
  id: string;
  title: string | null;
  lower: string;
  lowerId: string;
}

export interface ConceptOptions {
  q?: string;
  pos?: number;
  renderLimit?: number;
}

export class Notes {
  rows = new Map<string, Row>();
  private byBundle = new Map<string, Row[]>();
  private bundles: string[] = [];
  private backlinks = new Map<string, string[]>();
  private entries: SourceEntry[] = [];
  private docs: Documents = indexDocuments([]);
  private snapshotInfo: SnapshotInfo = { snapshot: '', concepts: 0 };
  private names: Name[] = [];
  private diagnostics = new Map<string, Diagnostic[]>();
  private refreshing: Promise<void> | null = null;
  private again = false;
  readonly reader: RevisionReader;

  constructor(
    readonly conn: Connection,
    readonly store: IndexedDbTenantStore,
    readonly database: string,
    private readonly emit: (summary: Summary, cause: 'local' | 'elsewhere') => void,
  ) {
    this.reader = new RevisionReader(store);
    // Another tab moved the head: read again (the connection refreshes before each read).
    // The store tells this worker of its own commits too (the connection's store and this
    // one are two listeners): those it knows of already.
    store.onHeadChange(() => void this.headMoved());
  }

  // ---------------------------------------------------------------------------------------
  // Reading the tenant

  /** The last revision this worker committed. */
  private own: string | null = null;

  /** Notes a revision this worker committed, so that the store's word of it is not news. */
  committed(revision: string): void {
    if (revision) this.own = revision;
  }

  private async headMoved(): Promise<void> {
    try {
      const bytes = await this.store.readHead();
      const head = bytes ? (JSON.parse(new TextDecoder().decode(bytes)) as { revision?: string }).revision : null;
      if (head && head === this.own) return;
    } catch {
      // Unreadable here: the refresh below reports it.
    }
    // The engine may load the new head afresh, forgetting which sources it has read.
    this.readying.clear();
    await this.refresh('elsewhere');
  }

  private soon: ReturnType<typeof setTimeout> | null = null;

  /**
   * A refresh a moment from now: saves in quick succession share one (re-reading 20,000
   * rows takes the worker a few hundred milliseconds, which a second save would wait for).
   */
  refreshSoon(): void {
    if (this.soon !== null) clearTimeout(this.soon);
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.refresh('local');
    }, 250);
  }

  /** Brings the rows up to date now when a refresh is due (a plan compares with them). */
  async current(): Promise<void> {
    if (this.soon !== null) {
      clearTimeout(this.soon);
      this.soon = null;
      await this.refresh('local');
    } else if (this.refreshing) await this.refreshing;
  }

  private holdRefresh(): void {
    if (this.soon === null) return;
    clearTimeout(this.soon);
    this.soon = null;
  }

  /** Whether the rows (titles, statuses, links) are read; until then lists show ids. */
  private rowsReady = false;

  /**
   * The first read after opening, in two steps: the listing and the snapshot, which are
   * enough to show the bundles and their notes (by id), then the rows, read after it
   * resolves (a few hundred milliseconds at 20,000 notes), which add titles and links.
   */
  async openQuick(): Promise<void> {
    const [entries, snapshot] = await Promise.all([this.conn.listSource(), this.conn.snapshot()]);
    this.setEntries(entries);
    this.snapshotInfo = snapshot;
    this.bundles = [...new Set(entries.map((e) => e.bundle))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    void this.refresh('local');
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
          const [manifest, entries, snapshot] = await Promise.all([this.conn.manifestRows(), this.conn.listSource(), this.conn.snapshot()]);
          this.load(manifest, entries, snapshot);
          this.emit(this.summary(), cause);
        } while (this.again);
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private load(manifest: ManifestRows, entries: SourceEntry[], snapshot: SnapshotInfo): void {
    this.rows = new Map(manifest.rows.map((r) => [r.id, r]));
    this.bundles = manifest.bundles;
    this.rowsReady = true;
    const back = new Map<string, string[]>();
    const byBundle = new Map<string, Row[]>();
    for (const r of manifest.rows) {
      for (const l of r.links) {
        let list = back.get(l);
        if (!list) back.set(l, (list = []));
        list.push(r.id);
      }
      let list = byBundle.get(r.bundle);
      if (!list) byBundle.set(r.bundle, (list = []));
      list.push(r);
    }
    this.backlinks = back;
    this.byBundle = byBundle;
    this.setEntries(entries);
    this.snapshotInfo = snapshot;
    this.rebuildNames();
  }

  private rebuildNames(): void {
    const out: Name[] = [];
    for (const r of this.rows.values()) {
      const t = this.titleOf(r.id);
      out.push({ id: r.id, title: t, lower: (t ?? '').toLowerCase(), lowerId: r.id.toLowerCase() });
    }
    this.names = out;
  }

  private entryOf(id: string): SourceEntry | undefined {
    return this.docs.byId.get(id);
  }

  private titleOf(id: string): string | null {
    return this.rows.get(id)?.title ?? null;
  }

  ref(id: string): NoteRef {
    const r = this.rows.get(id);
    const e = this.entryOf(id);
    return { id, title: this.titleOf(id), bundle: r?.bundle ?? e?.bundle ?? '', path: e?.path ?? '', status: r?.status ?? '-' };
  }

  summary(): Summary {
    const counts = new Map<string, BundleSummary>();
    for (const b of this.bundles) counts.set(b, { name: b, concepts: 0, draft: 0, deprecated: 0, stale: 0, documents: 0 });
    for (const r of this.rows.values()) {
      const c = counts.get(r.bundle);
      if (!c) continue;
      c.concepts++;
      if (r.status === 'draft' || r.status === 'deprecated' || r.status === 'stale') c[r.status]++;
    }
    for (const e of this.entries) {
      const c = counts.get(e.bundle);
      if (!c) continue;
      c.documents++;
      if (!this.rowsReady && e.id !== undefined) c.concepts++;
    }
    return {
      tenant: this.conn.tenant,
      database: this.database,
      snapshot: this.snapshotInfo.snapshot,
      concepts: this.snapshotInfo.concepts,
      bundles: [...counts.values()],
    };
  }

  listing(bundle: string): BundleListing {
    const notes = this.rowsReady
      ? (this.byBundle.get(bundle) ?? []).map((r) => this.ref(r.id))
      : this.entries.filter((e) => e.bundle === bundle && e.id !== undefined).map((e) => ({ id: e.id!, title: null, bundle, path: e.path, status: '-' }));
    notes.sort((a, b) => compareNames(a.title ?? a.id, b.title ?? b.id) || (a.id < b.id ? -1 : 1));
    const navigation = this.entries.filter((e) => e.bundle === bundle && e.id === undefined).map((e) => ({ bundle: e.bundle, path: e.path }));
    return { bundle, notes, navigation };
  }

  /**
   * The stored hash (and id) of a document now. The listing is re-read a moment after each
   * commit (`refreshSoon`), so one that is due is read first: a hash asked for right after a
   * save is the saved one (a restore or a delete names it as the version it replaces).
   */
  async entry(bundle: string, path: string): Promise<{ hash: string; id?: string } | null> {
    await this.current();
    const e = this.docs.byPath.get(key(bundle, path));
    return e ? { hash: e.hash, ...(e.id !== undefined ? { id: e.id } : {}) } : null;
  }

  /** References for ids (unknown ones left out), in the order asked. */
  refs(ids: string[]): NoteRef[] {
    return ids.filter((id) => this.rows.has(id)).map((id) => this.ref(id));
  }

  /** The package's index of where links go, over the listing last read; built when first needed. */
  private targets: LinkTargets | null = null;

  private setEntries(entries: SourceEntry[]): void {
    this.entries = entries;
    this.docs = indexDocuments(entries);
    this.targets?.free();
    this.targets = null;
  }

  /**
   * Where the links of a document in `bundle`/`path` go: the compiler's rule, through the
   * package (`linkTargets`, docs/compile.md §6.2–§6.3), over the listed documents. A link
   * nothing resolves is shown as broken and names the note that would resolve it.
   */
  private linkContext(bundle: string, path: string, self: string): LinkContext {
    // Looked up at each call, not kept: a context made before an await may be used after a
    // refresh has freed the index it would have kept.
    const targets = () => (this.targets ??= linkTargets(this.entries));
    return {
      markdown: (d) => targets().markdown(bundle, path, d),
      wiki: (inner) => targets().wiki(bundle, inner),
      anchor: (fragment) => `${self}?anchor=${encodeURIComponent(fragment)}`,
    };
  }

  // ---------------------------------------------------------------------------------------
  // Views

  async concept(id: string, options: ConceptOptions = {}): Promise<ConceptModel | null> {
    const [info, sources] = await Promise.all([this.conn.concept(id), this.conn.get([id], { source: true })]);
    const source = sources.get(id);
    if (!info || !source || source.bundle === undefined || source.path === undefined) return null;
    const body = { text: source.text.slice(info.bodyStart) };
    const bundle = source.bundle;
    const path = source.path;
    const row = this.rows.get(id) ?? info;
    const self = `#/c/${encodeURIComponent(id)}`;
    const ctx = this.linkContext(bundle, path, self);

    let hit: ConceptModel['hit'] = null;
    let limit = options.renderLimit ?? RENDER_LIMIT;
    if (options.q !== undefined && options.pos !== undefined) {
      const words = queryWords(options.q);
      const window = body.text.slice(options.pos, options.pos + 2000);
      const found = cluster(occurrences(window, words));
      const from = options.pos + (found[0]?.at ?? 0);
      const to = options.pos + (found.length ? found[found.length - 1].end : Math.min(window.length, 200));
      hit = { fromLine: lineOf(body.text, from), toLine: lineOf(body.text, Math.max(from, to - 1)), words: [...new Set(found.map((o) => o.word))] };
      limit = Math.max(limit, to + 10_000);
    }
    const cut = cutAt(body.text, 0, limit);
    const outline = outlineOf(body.text, info.sections);
    const links = (row?.links ?? []).map((l) => this.ref(l));
    const backlinks = await this.backlinksOf(id);
    return {
      note: { id, title: info.title, bundle, path, status: info.status },
      kind: info.kind,
      grain: info.grain,
      summary: info.summary,
      description: info.description,
      hasFrontmatter: info.frontmatter,
      hash: source.hash!,
      bytes: new TextEncoder().encode(source.text).length,
      html: render(body.text.slice(0, cut), ctx),
      bodyLength: body.text.length,
      renderedTo: cut,
      outline,
      links,
      backlinks,
      diagnostics: this.diagnostics.get(key(bundle, path)) ?? null,
      hit,
    };
  }

  /** The next part of a long note's body, from `from` (a value of `renderedTo`). */
  async renderMore(id: string, from: number, limit: number): Promise<{ html: string; renderedTo: number } | null> {
    const body = (await this.conn.get([id])).get(id);
    if (!body) return null;
    const e = this.entryOf(id);
    if (!e) return null;
    const ctx = this.linkContext(e.bundle, e.path, `#/c/${encodeURIComponent(id)}`);
    const cut = cutAt(body.text, from, limit);
    return { html: render(body.text.slice(from, cut), ctx, lineOf(body.text, from)), renderedTo: cut };
  }

  /** The concepts linking here, each with the sentences around its links to `id`. */
  private async backlinksOf(id: string): Promise<Backlink[]> {
    const from = this.backlinks.get(id) ?? [];
    const read = from.slice(0, BACKLINKS_READ);
    const bodies = read.length ? await this.conn.get(read, { limit: 200_000 }) : new Map();
    return from.map((other) => {
      const ref = this.ref(other);
      const contexts: Marked[] = [];
      const b = bodies.get(other);
      const row = this.rows.get(other);
      const e = this.entryOf(other);
      if (b && row && e) {
        const ctx = this.linkContext(e.bundle, e.path, '');
        for (const use of linkUses(b.text, ctx)) {
          if (use.target.kind === 'concept' && use.target.id === id) {
            contexts.push(sentence(use.text, use.start, use.end));
            if (contexts.length >= CONTEXTS_PER_BACKLINK) break;
          }
        }
      }
      return { ...ref, contexts };
    });
  }

  async documentView(bundle: string, path: string): Promise<DocumentModel | null> {
    const source = await this.conn.readSource(bundle, path);
    if (!source) return null;
    const body = split(source.content).body;
    const cut = cutAt(body, 0, RENDER_LIMIT);
    return { bundle, path, hash: source.hash, html: render(body.slice(0, cut), this.linkContext(bundle, path, `#/d/${encodeURIComponent(bundle)}/${path}`)) };
  }

  /** The editor's preview of unsaved text, rendered as the note would be. */
  preview(bundle: string, path: string, text: string, limit: number): PreviewModel {
    const body = split(text).body;
    const cut = cutAt(body, 0, limit);
    return { html: render(body.slice(0, cut), this.linkContext(bundle, path, '#')), renderedTo: cut, length: body.length };
  }

  async search(query: string): Promise<SearchAnswer> {
    const t0 = performance.now();
    const r = await this.conn.searchRows(query);
    const t1 = performance.now();
    const words = queryWords(query);
    const windows = new Map<string, string>();
    const direct = r.hits.filter((h) => !h.linked && h.pos !== null);
    // The hits whose window lies near their body's start share one read.
    const near = direct.filter((h) => h.pos! < NEAR);
    if (near.length) {
      const limit = Math.max(...near.map((h) => h.pos!)) + WINDOW;
      const got = await this.conn.get(
        near.map((h) => h.id),
        { offset: 0, limit },
      );
      for (const h of near) {
        const s = got.get(h.id);
        if (s) windows.set(h.id, s.text.slice(h.pos!, h.pos! + WINDOW));
      }
    }
    for (const h of direct.filter((x) => x.pos! >= NEAR)) {
      const s = (await this.conn.get([h.id], { offset: h.pos!, limit: WINDOW })).get(h.id);
      if (s) windows.set(h.id, s.text);
    }
    const hits: SearchHit[] = r.hits.map((h) => {
      const w = windows.get(h.id);
      return {
        ...this.ref(h.id),
        bundle: h.bundle,
        status: h.status,
        kind: h.kind,
        summary: h.summary,
        direct: !h.linked,
        pos: h.pos,
        passage: w !== undefined ? passage(w, words) : null,
      };
    });
    const t2 = performance.now();
    return { query: r.query, direct: r.direct, linked: r.linked, hits, ms: t2 - t0, searchMs: t1 - t0, passagesMs: t2 - t1 };
  }

  /** Notes whose title or id matches `query`, best first: the quick switcher and `[[`. */
  switcher(query: string, limit: number): NoteRef[] {
    const q = query.trim().toLowerCase();
    if (q === '') return [];
    const scored: Array<{ id: string; score: number; name: string }> = [];
    for (const n of this.names) {
      const s = Math.max(score(n.lower, q), score(n.lowerId, q) - 5);
      if (s > 0) scored.push({ id: n.id, score: s, name: n.title ?? n.id });
    }
    scored.sort((a, b) => b.score - a.score || a.name.length - b.name.length || compareNames(a.name, b.name));
    return scored.slice(0, limit).map((s) => this.ref(s.id));
  }

  // ---------------------------------------------------------------------------------------
  // Writes

  /** The stored source of a document (the editor's text); readies its bundle for a save. */
  async readSource(bundle: string, path: string) {
    const source = await this.conn.readSource(bundle, path);
    void this.readyBundle(bundle);
    return source;
  }

  /** Bundles whose stored sources are being read ahead of a save (see `readyBundle`). */
  private readying = new Map<string, Promise<void>>();

  /**
   * Reads the stored sources of a bundle's documents now, while the person edits one of
   * them. A connection that opened from a derived record checks, at the first commit that
   * touches a bundle, every source the new revision keeps from it against the store
   * (docs/engine.md §9.1 rule 1): at 20,000 notes that is 500 records, read here instead of
   * while the save waits. A read with `source` checks them the same way, once per open.
   */
  readyBundle(bundle: string): Promise<void> {
    let r = this.readying.get(bundle);
    if (!r) {
      const ids = (this.byBundle.get(bundle) ?? []).map((row) => row.id);
      const navigation = this.entries.filter((e) => e.bundle === bundle && e.id === undefined);
      r = (async () => {
        for (let i = 0; i < ids.length; i += READ_BATCH) await this.conn.get(ids.slice(i, i + READ_BATCH), { source: true, limit: 0 });
        for (const e of navigation) await this.conn.readSource(e.bundle, e.path);
      })().catch(() => {
        // A failure here is met again, and reported, by the save.
        this.readying.delete(bundle);
      });
      this.readying.set(bundle, r);
    }
    return r;
  }

  /** A save; the page hears of the new state by the `data` event that follows. */
  async write(bundle: string, path: string, content: string, replaces: string | undefined) {
    // A refresh due from an earlier save waits for this one (and then serves both).
    this.holdRefresh();
    // Sources being read ahead of this save are not read twice.
    await this.readying.get(bundle);
    let result;
    try {
      result = await this.conn.write(bundle, path, content, replaces);
    } catch (e) {
      this.refreshSoon();
      throw e;
    }
    this.committed(result.revision);
    this.diagnostics.set(key(bundle, path), result.diagnostics);
    this.refreshSoon();
    return result;
  }

  async remove(bundle: string, path: string, replaces: string) {
    const result = await this.conn.delete(bundle, path, replaces);
    this.committed(result.revision);
    this.diagnostics.delete(key(bundle, path));
    await this.refresh('local');
    return result;
  }

  diagnosticsOf(bundle: string, path: string): Diagnostic[] | null {
    return this.diagnostics.get(key(bundle, path)) ?? null;
  }

  /** Keeps the diagnostics of a whole-tenant result (a transact, an import or a restore). */
  noteTenantDiagnostics(list: Diagnostic[], scope?: Set<string>): void {
    const fresh = new Map<string, Diagnostic[]>();
    for (const d of list) {
      const k = key(d.bundle, d.path);
      const l = fresh.get(k);
      if (l) l.push(d);
      else fresh.set(k, [d]);
    }
    for (const e of this.entries) {
      const k = key(e.bundle, e.path);
      if (scope && !scope.has(k)) continue;
      this.diagnostics.set(k, fresh.get(k) ?? []);
    }
  }

  // ---------------------------------------------------------------------------------------
  // History

  async history(before: string | undefined, limit: number) {
    return this.conn.history(before ? { limit, before } : { limit });
  }

  async latest() {
    return (await this.conn.history({ limit: 1 })).revisions[0] ?? null;
  }

  async headRevision(): Promise<string | null> {
    return (await this.latest())?.revision ?? null;
  }

  async revision(id: string): Promise<RevisionModel> {
    const [head, rev, changes] = await Promise.all([this.headRevision(), this.reader.revision(id), this.reader.changes(id)]);
    return { revision: id, parent: rev.parent, created: rev.created, head, changes };
  }

  source(hash: string): Promise<string> {
    return this.reader.source(hash);
  }

  /**
   * The revisions in which `bundle/path` changed, newest first, looking at up to 60
   * revisions from `before` (the head when absent); `next` goes on from there.
   */
  async noteHistory(bundle: string, path: string, before: string | undefined): Promise<NoteHistoryPage> {
    let cur: string | null = before ?? (await this.headRevision());
    const versions: NoteVersion[] = [];
    let scanned = 0;
    while (cur && scanned < 60) {
      scanned++;
      let rev;
      try {
        rev = await this.reader.revision(cur);
      } catch {
        // Collected (gc keeps only recent revisions): the retained history ends here.
        cur = null;
        break;
      }
      const mine = await this.reader.bundleRecord(cur, bundle);
      let parentRecord: string | undefined;
      let parentKnown = true;
      if (rev.parent) {
        try {
          parentRecord = await this.reader.bundleRecord(rev.parent, bundle);
        } catch {
          parentKnown = false;
        }
      }
      if (!rev.parent || !parentKnown || mine !== parentRecord) {
        const after = mine ? await this.reader.hashAt(cur, bundle, path) : undefined;
        const beforeHash = rev.parent && parentKnown && parentRecord ? await this.reader.hashAt(rev.parent, bundle, path) : undefined;
        if (after !== beforeHash) {
          versions.push({
            revision: cur,
            created: rev.created,
            change: beforeHash === undefined ? 'added' : after === undefined ? 'removed' : 'modified',
            ...(after !== undefined ? { after } : {}),
            ...(beforeHash !== undefined ? { before: beforeHash } : {}),
          });
        }
      }
      cur = parentKnown ? rev.parent : null;
    }
    return { versions, scanned, ...(cur ? { next: cur } : {}) };
  }

  async restore(revision: string, expected: string): Promise<RevisionResult> {
    const result = await this.conn.restore({ revision, expectedRevision: expected });
    this.committed(result.revision);
    this.noteTenantDiagnostics(result.diagnostics);
    await this.refresh('local');
    return result;
  }

  // ---------------------------------------------------------------------------------------
  // Agents, export

  async agent(): Promise<AgentModel> {
    const manifest = await this.conn.manifest();
    return { manifest, tools: this.conn.tools(), firstId: this.rows.keys().next().value ?? null };
  }

  /** Writes a pending derived record now (the page is being hidden). */
  flushDerived(): Promise<void> {
    return this.conn.flushDerived();
  }

  manifest(): Promise<string> {
    return this.conn.manifest();
  }

  callTool(name: string, args: unknown) {
    return this.conn.callTool(name, args);
  }

  async exportZip(): Promise<{ bytes: Uint8Array; files: number }> {
    const docs = await this.conn.documents();
    const encoder = new TextEncoder();
    const mtime = new Date(1980, 0, 1);
    const files: Record<string, [Uint8Array, { mtime: Date }]> = {};
    for (const d of docs) files[`${d.bundle}/${d.path}`] = [encoder.encode(d.content), { mtime }];
    return { bytes: zipSync(files, { level: 6 }), files: docs.length };
  }

  /** The stored source of every document equal to one of `keys` (`bundle\npath`). */
  async storedContents(keys: Set<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const ids: string[] = [];
    const nav: SourceEntry[] = [];
    for (const k of keys) {
      const e = this.docs.byPath.get(k);
      if (!e) continue;
      if (e.id !== undefined) ids.push(e.id);
      else nav.push(e);
    }
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const got = await this.conn.get(ids.slice(i, i + READ_BATCH), { source: true });
      for (const s of got.values()) if (s.bundle !== undefined && s.path !== undefined) out.set(key(s.bundle, s.path), s.text);
    }
    for (const e of nav) {
      const s = await this.conn.readSource(e.bundle, e.path);
      if (s) out.set(key(e.bundle, e.path), s.content);
    }
    return out;
  }

  /** The stored entry of `bundle/path`, bundle names compared ignoring case. */
  storedEntry(bundle: string, path: string): SourceEntry | undefined {
    const exact = this.docs.byPath.get(key(bundle, path));
    if (exact) return exact;
    const b = this.bundles.find((x) => x.toLowerCase() === bundle.toLowerCase());
    return b ? this.docs.byPath.get(key(b, path)) : undefined;
  }

  /** The stored bundle spelled like `bundle` ignoring case, or `bundle`. */
  bundleName(bundle: string): string {
    return this.bundles.find((x) => x.toLowerCase() === bundle.toLowerCase()) ?? bundle;
  }
}

function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** How well `hay` matches `q`: a prefix, a word's prefix, a substring, or the letters in order. */
function score(hay: string, q: string): number {
  if (hay === '') return 0;
  if (hay === q) return 100;
  if (hay.startsWith(q)) return 90;
  const at = hay.indexOf(q);
  if (at > 0) return /[\p{L}\p{N}]/u.test(hay[at - 1]) ? 60 : 80;
  // The letters in order, fewer gaps first.
  let i = 0;
  let gaps = 0;
  let last = -1;
  for (const c of q) {
    if (c === ' ') continue;
    const j = hay.indexOf(c, i);
    if (j < 0) return 0;
    if (last >= 0 && j > last + 1) gaps++;
    last = j;
    i = j + 1;
  }
  return Math.max(1, 40 - gaps * 4);
}
