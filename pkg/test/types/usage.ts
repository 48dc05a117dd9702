// Type-checks the package's declarations (`npm run typecheck`): every call of js.md §1–§6
// and the stores, used as a caller would. Nothing here runs.

import { files, memory, version, open, createMcpServer, importFolder, exportFolder, planFolder, linkTargets, LangonrockError, CODES } from 'langonrock';
import type { Connection, ErrorCode, FolderPlan, LinkTarget, Slice, SourceEntry, Store, SwapOutcome, TenantStore, Tool } from 'langonrock';
import { indexedDb } from '../../src/browser.js';
import type { IndexedDbTenantStore } from '../../src/browser.js';
import { indexedDb as indexedDbAlone } from 'langonrock/indexeddb';
import type { IndexedDbStore } from 'langonrock/indexeddb';


const v: string = version();
const codes: readonly ErrorCode[] = CODES;

async function stores(): Promise<void> {
  const m: Store = memory({ now: () => 1, strict: true });
  const m2 = memory({ sharing: memory(), failAt: (point) => point === 'put' });
  const f = files({ dataRoot: '/tmp/x', failAt: async (point, detail) => point === 'swap:mid' && detail?.generation === 2 });
  const root: string = f.dataRoot;
  const db = indexedDb({ name: 'notes' });
  // The store alone, without the WebAssembly module (`langonrock/indexeddb`).
  const alone: IndexedDbStore = indexedDbAlone({ name: 'notes' });
  const aloneTenant: IndexedDbTenantStore = await alone.open('acme');
  const t: TenantStore = await m.open('acme');
  const head: Uint8Array | null = await t.readHead();
  const one: Uint8Array | null = await t.get({ kind: 'source', digest: 'a'.repeat(64) });
  const many: Array<Uint8Array | null> = await t.getMany([{ kind: 'revision', digest: 'b'.repeat(64) }]);
  await t.put({ kind: 'derived', digest: 'c'.repeat(64) }, new Uint8Array([1]));
  const outcome: SwapOutcome = await t.swapHead(head, new Uint8Array());
  const infos = await t.keys();
  const when: number = infos[0].putTime + infos[0].size;
  const removed = await t.remove([infos[0].key], Date.now() - 3_600_000);
  const idb: IndexedDbTenantStore = await db.open('acme');
  const stop: () => void = idb.onHeadChange(() => {});
  stop();
  await (await m2.open('acme')).close();
  await f.close();
  void [one, many, outcome, when, removed, root];
}

async function remote(): Promise<void> {
  const r: Connection = await open('okf+https://kb.example.com?tenant=acme&token=t', { readOnly: true, limits: { answerMs: 5000, stallMs: 1000, maxBody: 1 << 20 } });
  const u: Connection = await open('okf+unix:///run/langonrock.sock?tenant=acme');
  const isRemote: boolean | undefined = r.remote;
  const denied: ErrorCode = 'UNAUTHORIZED';
  void [u, isRemote, denied, await r.callTool('snapshot', {})];
}

async function connection(): Promise<void> {
  const c: Connection = await open({ tenant: 'acme', store: memory(), readOnly: false, now: () => new Date(0) });
  const manifest: string = await c.manifest();
  const bundle: string = await c.manifest('ops');
  const slices: Map<string, Slice> = await c.get(['orders', 'constructor'], { section: 'schema', offset: 0, limit: 200, find: 'x', source: true });
  const first = slices.get('orders');
  const matchCount: number | undefined = first?.matchCount;
  const hits: string = await c.search('replay export', { k: 5, bundle: 'ops', expand: false });
  const { snapshot, concepts } = await c.snapshot();
  const rows = await c.manifestRows('ops');
  const title: string | null = rows.rows[0]?.title ?? null;
  const links: string[] = rows.rows[0]?.links ?? [];
  const found = await c.searchRows('replay export', { k: 3 });
  const pos: number | null = found.hits[0]?.pos ?? null;
  const linked: boolean = found.hits[0]?.linked ?? false;
  const info = await c.concept('runbook');
  const description: string | null = info?.description ?? null;
  const bodyStart: number = info?.bodyStart ?? 0;
  const listing = await c.listSource();
  const id: string | undefined = listing[0]?.id;
  const text = await c.readSource('ops', 'runbook.md');
  const content: string | undefined = text?.content;
  const w = await c.write('ops', 'runbook.md', '# Runbook\n', 'a'.repeat(64));
  const renamed: string[] = w.renamed.map((r) => r.from + r.to);
  const d = await c.delete('ops', 'runbook.md', w.hash);
  const b = await c.deleteBundle('ops');
  const tx = await c.transact({
    changes: [
      { operation: 'write', bundle: 'ops', path: 'a.md', content: 'x' },
      { operation: 'delete', bundle: 'ops', path: 'b.md', replaces: 'b'.repeat(64) },
    ],
    expectedRevision: b.revision,
  });
  const page = await c.history({ before: 'cursor', limit: 10 });
  const next: string | undefined = page.next;
  const parent: string | null = page.revisions[0].parent;
  const restored = await c.restore({ revision: tx.revision, expectedRevision: d.revision });
  const gc = await c.gc({ keep: 10, dryRun: true, graceMs: 0 });
  const verified = await c.verify();
  const headDigest: string | null = verified.head;
  const repaired = await c.repair({ revision: restored.revision, expectedHead: headDigest });
  const tools: Tool[] = c.tools({ databaseTools: true, readOnly: false });
  const called = await c.callTool('get', { ids: ['orders'] });
  const isError: boolean = called.isError;
  const imported = await importFolder(c, './notes', { bundle: 'ops', strict: true });
  const warnings: string = imported.line;
  const plan: FolderPlan = planFolder([{ path: 'a.md', kind: 'file' }], { name: 'notes', shown: './notes' });
  const firstBundle: string = plan.documents[0].bundle;
  void firstBundle;
  const exported: number = (await exportFolder(c, './out')).files;
  const advice: string | null = c.adviceNow();
  const tenant: string = c.tenant;
  const server = await createMcpServer(c, null, { databaseTools: true });
  await server.connect({});
  await server.close();
  await c.close();
  void [manifest, bundle, matchCount, hits, snapshot, concepts, content, renamed, next, parent, gc.kept, repaired.head, tools[0].inputSchema, isError, warnings, exported, advice, tenant, imported.committed, title, links, pos, linked, description, bodyStart];
}

function errors(e: unknown): string | undefined {
  if (e instanceof LangonrockError) {
    const code: ErrorCode = e.code;
    if (code === 'INDETERMINATE_COMMIT') return e.revision;
    if (code === 'CONFLICT') return e.reason ?? e.changes?.map((c) => `${c.index}:${c.reason}`).join(' ');
  }
  return undefined;
}

// @ts-expect-error: `files` needs a dataRoot.
files({});
// @ts-expect-error: a key's kind is one of five.
void ((t: TenantStore) => t.get({ kind: 'blob', digest: '' }));
// @ts-expect-error: a delete change needs `replaces`.
void ((c: Connection) => c.transact({ changes: [{ operation: 'delete', bundle: 'b', path: 'p.md' }] }));

void [v, codes, stores, connection, remote, errors];

// Following links.
export function follow(entries: SourceEntry[]): string {
  const t = linkTargets(entries);
  const to: LinkTarget = t.wiki('sales', 'orders');
  t.free();
  return to.kind === 'concept' ? to.id : to.kind;
}
