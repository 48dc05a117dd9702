// Imports in the engine worker: a folder (picked or dropped) becomes ONE revision through the
// engine's `import` (the project's cli.md §4, the package's `importDocuments`), as the command
// line makes it, however many files it has; loose files (a drop, a file picker) go through
// one `transact`. Nothing is committed until the person confirms the plan, and Cancel stops
// the import with nothing committed, up to the moment its records are being stored.
//
// The folder is read as compile.md §1.1 reads one: each folder in it a bundle (or the whole
// folder one bundle), `.md` files at any depth, names starting with `.` skipped; every name is
// checked with the package's rules (`checkBundleName`, `checkDocumentPath`) so that all the
// bad ones are listed at once, and none is imported unless the person skips them.

import { checkBundleName, checkDocumentPath, endsWithMd, nfc, planFolder, type Change, type Diagnostic, type FolderEntry, type FolderPlan, type FolderPlanOptions } from 'langonrock';
import type { Notes } from './notes.js';
import type { ImportChoices, ImportOptions, ImportOutcome, ImportPlan, ImportProgress } from './types.js';

interface Doc {
  bundle: string;
  path: string;
  content: string;
  hash: string;
  bytes: number;
  state: 'new' | 'same' | 'differs';
  stored?: string;
}

interface Job {
  plan: ImportPlan;
  docs: Doc[];
  location: string | null;
  /** `bundle\npath` (bundle lower-cased) of notes to keep that the import would delete. */
  missing: string[];
  cancelled: boolean;
  storing: boolean;
}

/** transact's request limits (engine.md §5.2 rule 7): loose files must fit in one. */
const MAX_CHANGES = 1000;
const MAX_BYTES = 16 * 1024 * 1024;
const CHUNK = 256;

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const pause = () => new Promise((r) => setTimeout(r, 0));

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let out = '';
  for (const b of digest) out += b.toString(16).padStart(2, '0');
  return out;
}

function problem(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class CancelledError extends Error {
  constructor() {
    super('The import was cancelled: nothing was committed.');
    this.name = 'CancelledError';
  }
}

/**
 * The package's folder rule (`planFolder`, docs/import.md) over the picked files, with every
 * file whose name the notes cannot take listed instead of refusing the whole folder at the
 * first one, as the command line does: such files are left out of the plan (reported as not
 * files), so the person sees all of them and can skip them. A name is bad when its path is
 * invalid in the layout the rule picks, or equals an earlier one but for case.
 */
function planNames(rels: string[], options: FolderPlanOptions): { plan: FolderPlan; problems: Map<number, string> } {
  const problems = new Map<number, string>();
  const seen = new Map<string, number>();
  // Paths equal ignoring case are the same in either layout: the first one stays.
  rels.forEach((rel, i) => {
    if (rel.split('/').some((s) => s.startsWith('.')) || !endsWithMd(rel)) return;
    const k = nfc(rel).toLowerCase();
    const first = seen.get(k);
    if (first === undefined) seen.set(k, i);
    else problems.set(i, `the same name as ${rels[first]} but for case: document paths must be unique across case-insensitive filesystems`);
  });
  const check = (path: string): string | null => {
    try {
      checkDocumentPath(nfc(path));
      return null;
    } catch (e) {
      return problem(e);
    }
  };
  // What a path is in each layout: the whole of it in one bundle; in bundles, all but its
  // first segment (the bundle), and a root file is left out there rather than invalid.
  const asOne = rels.map((rel) => (endsWithMd(rel) ? check(rel) : null));
  const asBundles = rels.map((rel) => (endsWithMd(rel) && rel.includes('/') ? check(rel.slice(rel.indexOf('/') + 1)) : null));
  const entries = (bad: (i: number) => string | null): FolderEntry[] =>
    rels.map((rel, i) => ({ path: rel, kind: problems.has(i) || bad(i) !== null ? 'other' : 'file' }));
  // First without anything that is bad in either layout, to learn the layout; then without
  // what is bad in that one.
  let plan = planFolder(entries((i) => asOne[i] ?? asBundles[i]), options);
  const bad = (p: FolderPlan) => (i: number) => (p.layout === 'one' ? asOne[i] : asBundles[i]);
  const exact = planFolder(entries(bad(plan)), options);
  if (exact.layout === plan.layout) plan = exact;
  const why = bad(plan);
  rels.forEach((_, i) => {
    const w = why(i);
    if (w !== null && !problems.has(i)) problems.set(i, w);
  });
  return { plan, problems: new Map([...problems].sort((a, b) => a[0] - b[0])) };
}

export class Importer {
  private jobs = new Map<number, Job>();
  private cancelledEarly = new Set<number>();
  private picked = new Map<number, Array<{ rel: string; file: Blob }>>();

  constructor(
    private readonly notes: Notes,
    private readonly progress: (job: number, p: ImportProgress) => void,
  ) {}

  /** Takes a slice of the chosen files (a File for each `.md` one); resolves how many the job has. */
  add(job: number, files: Array<{ rel: string; file: File | null }>): number {
    let list = this.picked.get(job);
    if (!list) this.picked.set(job, (list = []));
    for (const f of files) list.push({ rel: f.rel, file: f.file ?? new Blob() });
    return list.length;
  }

  /** Reads, checks, hashes and compares the files handed in; commits nothing. */
  async plan(job: number, options: ImportOptions): Promise<ImportPlan> {
    const started = performance.now();
    const files = this.picked.get(job) ?? [];
    this.picked.delete(job);
    await this.notes.current();
    const warnings: string[] = [];
    const invalid: ImportPlan['invalid'] = [];
    const undecodable: string[] = [];
    const one = options.bundle !== null ? nfc(options.bundle.trim()) : null;
    const sorted = [...files].sort((a, b) => byCodePoint(a.rel, b.rel));
    const hidden = (rel: string) => rel.split('/').some((s) => s.startsWith('.'));
    const ignored = sorted.filter((f) => !hidden(f.rel) && !endsWithMd(f.rel)).length;
    let wanted: Array<{ bundle: string; path: string; rel: string; file: Blob }>;
    let layout: ImportPlan['layout'];
    let line: string;
    if (options.loose) {
      // Loose files: no folder to read, each file a document of the chosen bundle.
      if (one === null) throw new Error('Name the bundle the files go into.');
      checkBundleName(one);
      layout = 'files';
      line = `The files go into the bundle “${one}”.`;
      wanted = [];
      const seen = new Set<string>();
      for (const { rel, file } of sorted) {
        if (hidden(rel) || !endsWithMd(rel)) continue;
        let path: string;
        try {
          path = checkDocumentPath(nfc(rel));
        } catch (e) {
          invalid.push({ file: rel, problem: problem(e) });
          continue;
        }
        if (seen.has(path.toLowerCase())) {
          invalid.push({ file: rel, problem: 'another file has the same name but for case: document paths must be unique across case-insensitive filesystems' });
          continue;
        }
        seen.add(path.toLowerCase());
        wanted.push({ bundle: this.notes.bundleName(one), path, rel, file });
      }
    } else {
      const r = planNames(sorted.map((f) => f.rel), { bundle: one ?? undefined, name: options.folder, shown: options.folder });
      for (const [i, why] of r.problems) invalid.push({ file: sorted[i].rel, problem: why });
      layout = r.plan.layout === 'one' ? 'bundle' : 'bundles';
      line = r.plan.line;
      wanted = r.plan.documents.map((d) => ({ bundle: this.notes.bundleName(d.bundle), path: d.path, rel: sorted[d.entry].rel, file: sorted[d.entry].file }));
    }
    const planned = { layout, line, bundle: layout === 'bundles' ? null : wanted[0]?.bundle ?? one };

    // Files are read a chunk at a time through one Blob: a browser reads one blob of many
    // files far faster than many small files one by one.
    const docs: Doc[] = [];
    let bytes = 0;
    for (let i = 0; i < wanted.length; i += CHUNK) {
      if (this.cancelledEarly.has(job)) {
        this.cancelledEarly.delete(job);
        throw new CancelledError();
      }
      this.progress(job, { phase: 'read', done: i, total: wanted.length });
      const chunk = wanted.slice(i, i + CHUNK);
      const all = new Uint8Array(await new Blob(chunk.map((d) => d.file)).arrayBuffer());
      let at = 0;
      const read = chunk.map((d) => {
        const b = all.subarray(at, at + d.file.size);
        at += d.file.size;
        return { d, b };
      });
      const hashes = await Promise.all(read.map((r) => sha256(r.b)));
      read.forEach(({ d, b }, j) => {
        let content: string;
        try {
          content = decoder.decode(b);
        } catch {
          undecodable.push(d.rel);
          invalid.push({ file: d.rel, problem: `${d.bundle}/${d.path}: source must contain valid UTF-8` });
          return;
        }
        const stored = this.notes.storedEntry(d.bundle, d.path);
        const state = !stored ? 'new' : stored.hash === hashes[j] ? 'same' : 'differs';
        bytes += b.length;
        docs.push({ bundle: stored?.bundle ?? d.bundle, path: d.path, content, hash: hashes[j], bytes: b.length, state, ...(stored ? { stored: stored.hash } : {}) });
      });
    }
    this.progress(job, { phase: 'read', done: wanted.length, total: wanted.length });

    // What an earlier import of the same location left that the folder no longer has: the
    // engine deletes those that are unchanged here (cli.md §4 rule 3).
    const location = layout === 'files' ? null : `page:${options.folder}${one !== null ? `?bundle=${one}` : ''}`;
    const missing: string[] = [];
    if (location !== null) {
      const baseline = await this.notes.reader.baseline(location);
      if (baseline) {
        const inFolder = new Set(docs.map((d) => `${d.bundle.toLowerCase()}\n${d.path}`));
        for (const [k, hash] of baseline) {
          if (inFolder.has(k)) continue;
          const [b, p] = k.split('\n');
          if (this.notes.storedEntry(b, p)?.hash === hash) missing.push(k);
        }
      }
    }

    const bundles = [...new Set(docs.map((d) => d.bundle))];
    const plan: ImportPlan = {
      job,
      layout: planned.layout,
      bundle: planned.bundle,
      layoutReason: planned.line,
      documents: docs.length,
      bundles,
      fresh: docs.filter((d) => d.state === 'new').length,
      same: docs.filter((d) => d.state === 'same').length,
      differs: docs.filter((d) => d.state === 'differs').length,
      differing: docs.filter((d) => d.state === 'differs').slice(0, 10).map((d) => `${d.bundle}/${d.path}`),
      missing: missing.length,
      missingExamples: missing.slice(0, 10).map((k) => k.replace('\n', '/')),
      invalid,
      undecodable,
      warnings,
      ignored,
      bytes,
      ms: performance.now() - started,
    };
    this.jobs.set(job, { plan, docs, location, missing, cancelled: false, storing: false });
    return plan;
  }

  /** Commits a planned import as one revision; resolves `cancelled` when Cancel came first. */
  async commit(job: number, choices: ImportChoices): Promise<ImportOutcome> {
    const j = this.jobs.get(job);
    if (!j) throw new Error('This import is no longer planned: choose the files again.');
    const started = performance.now();
    const { plan } = j;
    if (plan.invalid.length && !choices.skipInvalid) {
      throw new Error(`${plan.invalid.length} file${plan.invalid.length === 1 ? ' has a name' : 's have names'} the notes cannot take: rename ${plan.invalid.length === 1 ? 'it' : 'them'}, or choose to skip ${plan.invalid.length === 1 ? 'it' : 'them'}. Nothing was imported.`);
    }
    const outcome = (committed: boolean, cancelled: boolean, revision = '', concepts = 0, diagnostics: Diagnostic[] = [], documents = 0): ImportOutcome => ({
      committed,
      cancelled,
      revision,
      concepts,
      documents,
      diagnostics,
      ms: performance.now() - started,
    });
    try {
      if (j.cancelled) return outcome(false, true);
      if (plan.layout === 'files') {
        const changes: Change[] = [];
        for (const d of j.docs) {
          if (d.state === 'new') changes.push({ operation: 'write', bundle: d.bundle, path: d.path, content: d.content });
          else if (d.state === 'differs' && !choices.keepStored) changes.push({ operation: 'write', bundle: d.bundle, path: d.path, content: d.content, replaces: d.stored });
        }
        if (changes.length === 0) return outcome(false, false);
        if (changes.length > MAX_CHANGES || plan.bytes > MAX_BYTES) {
          throw new Error(`${changes.length.toLocaleString('en-US')} files are more than one drop can take (1,000 files or 16 MiB): put them in a folder and import the folder, which has no such limit.`);
        }
        this.progress(job, { phase: 'store' });
        j.storing = true;
        const r = await this.notes.conn.transact({ changes });
        this.notes.committed(r.revision);
        const scope = new Set(changes.map((c) => `${c.bundle}\n${c.path}`));
        this.notes.noteTenantDiagnostics(r.diagnostics, scope);
        await this.notes.refresh('local');
        return outcome(true, false, r.revision, r.concepts, r.diagnostics.filter((d) => scope.has(`${d.bundle}\n${d.path}`)), changes.length);
      }

      // A folder: the engine's import, one revision. Notes to keep that the folder changed
      // or no longer has are sent as they are stored, so the engine leaves them alone.
      const keep = new Set<string>();
      if (choices.keepStored) for (const d of j.docs) if (d.state === 'differs') keep.add(`${d.bundle}\n${d.path}`);
      const missingKeys = choices.keepMissing ? j.missing.map((k) => {
        const [b, p] = k.split('\n');
        const e = this.notes.storedEntry(b, p);
        return e ? `${e.bundle}\n${e.path}` : null;
      }).filter((k): k is string => k !== null) : [];
      for (const k of missingKeys) keep.add(k);
      const stored = keep.size ? await this.notes.storedContents(keep) : new Map<string, string>();
      const documents = j.docs.map((d) => ({ bundle: d.bundle, path: d.path, content: stored.get(`${d.bundle}\n${d.path}`) ?? d.content }));
      for (const k of missingKeys) {
        const content = stored.get(k);
        if (content === undefined) continue;
        const [bundle, path] = k.split('\n');
        documents.push({ bundle, path, content });
      }
      const changed = j.docs.filter((d) => d.state === 'new' || (d.state === 'differs' && !choices.keepStored)).length + (choices.keepMissing ? 0 : plan.missing);
      this.progress(job, { phase: 'compile', documents: documents.length });
      await pause();
      const result = await this.notes.conn.importDocuments(j.location!, documents, {
        check: async () => {
          // The commit is prepared: the last moment a Cancel stops it with nothing stored.
          await pause();
          if (j.cancelled) return 'import cancelled';
          j.storing = true;
          this.progress(job, { phase: 'store' });
          return undefined;
        },
      });
      if (result.committed) this.notes.committed(result.revision);
      const scope = new Set(documents.map((d) => `${d.bundle}\n${d.path}`));
      this.notes.noteTenantDiagnostics(result.diagnostics, scope);
      await this.notes.refresh('local');
      // The next open decodes the imported state instead of compiling it: store it now.
      if (result.committed) void this.notes.conn.flushDerived();
      return outcome(result.committed, false, result.revision, result.concepts, result.diagnostics, changed);
    } catch (e) {
      if (j.cancelled && !j.storing) {
        this.progress(job, { phase: 'cancelled' });
        return outcome(false, true);
      }
      throw e;
    } finally {
      this.jobs.delete(job);
    }
  }

  /** Asks a running or planned import to stop; false once its records are being stored. */
  cancel(job: number): boolean {
    const j = this.jobs.get(job);
    if (!j) {
      // Still planning: the plan stops at its next chunk.
      this.cancelledEarly.add(job);
      return true;
    }
    if (j.storing) return false;
    j.cancelled = true;
    return true;
  }

  discard(job: number): void {
    this.jobs.delete(job);
    this.picked.delete(job);
    this.cancelledEarly.delete(job);
  }
}
