// What changed in one revision, and in which revisions one note changed. The connection's
// `history` names revisions and their parents; the documents of each are in the store's
// revision and bundle records (docs/records.md), read here through the tenant store's `get`,
// read-only, in the engine worker. Bundles whose record digest is equal in a revision and its
// parent are unchanged and not read.

import type { TenantStore } from 'langonrock';

export interface DocumentChange {
  bundle: string;
  path: string;
  change: 'added' | 'removed' | 'modified';
  /** The source hash before (absent when added). */
  before?: string;
  /** The source hash after (absent when removed). */
  after?: string;
}

interface RevisionRecord {
  parent: string | null;
  created: string;
  bundles: Array<{ name: string; record: string }>;
}

type Documents = Map<string, string>;

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class RevisionReader {
  private bundles = new Map<string, Documents>();
  private revisions = new Map<string, RevisionRecord>();

  constructor(private readonly store: TenantStore) {}

  private async json(kind: 'revision' | 'record', digest: string): Promise<Record<string, unknown>> {
    const bytes = await this.store.get({ kind, digest });
    if (bytes === null) throw new Error(`${kind}/${digest} is not in this browser's store (collected?)`);
    return JSON.parse(decoder.decode(bytes));
  }

  async revision(id: string): Promise<RevisionRecord> {
    let r = this.revisions.get(id);
    if (!r) {
      const v = await this.json('revision', id);
      if (v.format !== 'langonrock/revision' || v.version !== 1) throw new Error(`revision ${id.slice(0, 12)} has a record format this page does not read`);
      r = { parent: v.parent as string | null, created: v.created as string, bundles: v.bundles as RevisionRecord['bundles'] };
      this.revisions.set(id, r);
    }
    return r;
  }

  private async bundle(digest: string): Promise<Documents> {
    let d = this.bundles.get(digest);
    if (!d) {
      const v = await this.json('record', digest);
      if (v.format !== 'langonrock/bundle' || v.version !== 1) throw new Error(`bundle record ${digest.slice(0, 12)} has a format this page does not read`);
      d = new Map(v.documents as Array<[string, string]>);
      this.bundles.set(digest, d);
      // Bundle records of big tenants are large: keep the most recent few hundred.
      if (this.bundles.size > 400) this.bundles.delete(this.bundles.keys().next().value!);
    }
    return d;
  }

  /** The documents a revision changed against its parent, sorted by bundle and path. */
  async changes(id: string): Promise<DocumentChange[]> {
    const rev = await this.revision(id);
    const parent = rev.parent ? await this.revision(rev.parent) : { bundles: [] as RevisionRecord['bundles'] };
    const before = new Map(parent.bundles.map((b) => [b.name, b.record]));
    const after = new Map(rev.bundles.map((b) => [b.name, b.record]));
    const names = [...new Set([...before.keys(), ...after.keys()])].sort();
    const out: DocumentChange[] = [];
    for (const name of names) {
      const a = before.get(name);
      const b = after.get(name);
      if (a === b) continue;
      const old = a ? await this.bundle(a) : new Map<string, string>();
      const now = b ? await this.bundle(b) : new Map<string, string>();
      const paths = [...new Set([...old.keys(), ...now.keys()])].sort();
      for (const path of paths) {
        const x = old.get(path);
        const y = now.get(path);
        if (x === y) continue;
        if (x === undefined) out.push({ bundle: name, path, change: 'added', after: y });
        else if (y === undefined) out.push({ bundle: name, path, change: 'removed', before: x });
        else out.push({ bundle: name, path, change: 'modified', before: x, after: y });
      }
    }
    return out;
  }

  /** The source hash of `bundle/path` in a revision (bundle names compare ignoring case). */
  async hashAt(id: string, bundle: string, path: string): Promise<string | undefined> {
    const rev = await this.revision(id);
    const lower = bundle.toLowerCase();
    const b = rev.bundles.find((x) => x.name.toLowerCase() === lower);
    return b ? (await this.bundle(b.record)).get(path) : undefined;
  }

  /** The record digest of a bundle in a revision, or undefined. */
  async bundleRecord(id: string, bundle: string): Promise<string | undefined> {
    const lower = bundle.toLowerCase();
    return (await this.revision(id)).bundles.find((x) => x.name.toLowerCase() === lower)?.record;
  }

  /**
   * The baseline the head keeps for an import location (docs/records.md, "Baseline record"):
   * `bundle\npath` → source hash, or null when the location has none.
   */
  async baseline(location: string): Promise<Map<string, string> | null> {
    const head = await this.store.readHead();
    if (head === null) return null;
    const h = JSON.parse(decoder.decode(head)) as { format?: string; baselines?: Array<{ location: string; record: string }> };
    if (h.format !== 'langonrock/head') throw new Error('the head record has a format this page does not read');
    const entry = h.baselines?.find((b) => b.location === location);
    if (!entry) return null;
    const v = await this.json('record', entry.record);
    if (v.format !== 'langonrock/baseline' || v.version !== 1) throw new Error(`baseline record ${entry.record.slice(0, 12)} has a format this page does not read`);
    return new Map((v.documents as Array<[string, string, string]>).map(([b, p, hash]) => [`${b.toLowerCase()}\n${p}`, hash]));
  }

  /** A stored source text by its hash. */
  async source(hash: string): Promise<string> {
    const bytes = await this.store.get({ kind: 'source', digest: hash });
    if (bytes === null) throw new Error(`source ${hash.slice(0, 12)} is not in this browser's store`);
    return decoder.decode(bytes);
  }
}
