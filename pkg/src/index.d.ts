// Types of the `langonrock` package shared by its Node and browser entries (js.md).
// src/node.d.ts adds the files store, src/browser.d.ts the IndexedDB store.

// ---------------------------------------------------------------------------------------
// Errors (js.md §4, docs/README.md §4.4)

/** The stable error codes. */
export type ErrorCode =
  | 'INVALID'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'INDETERMINATE_COMMIT'
  | 'CORRUPT'
  | 'STORE'
  /** A remote server refused the token (docs/remote.md). */
  | 'UNAUTHORIZED'
  /** A remote server refused what the token grants. */
  | 'FORBIDDEN';

/** Every error code, in docs/README.md §4.4's order. */
export declare const CODES: readonly ErrorCode[];

/** Why a precondition failed (engine.md §3.2). */
export type PreconditionReason = 'exists' | 'missing' | 'changed';

/** One failing change of a refused `transact` (engine.md §5.3.2). */
export interface ChangeFailure {
  /** The change's index in the request. */
  index: number;
  reason: PreconditionReason;
}

/**
 * Every failure of the package: a real `Error` whose `message` is the exact text the docs give.
 * `INDETERMINATE_COMMIT` errors carry `revision`; a failed precondition carries `reason`; a
 * refused `transact` carries `changes`. Absent fields are left out.
 */
export declare class LangonrockError extends Error {
  constructor(
    code: ErrorCode,
    message: string,
    extra?: { revision?: string; reason?: PreconditionReason; changes?: ChangeFailure[]; cause?: unknown },
  );
  readonly name: 'LangonrockError';
  code: ErrorCode;
  /** With `INDETERMINATE_COMMIT`: the revision to inspect before retrying. */
  revision?: string;
  /** With a failed precondition (`CONFLICT`). */
  reason?: PreconditionReason;
  /** With a refused `transact` (`CONFLICT`): every failing change. */
  changes?: ChangeFailure[];
}

// ---------------------------------------------------------------------------------------
// Stores (js.md §2, engine.md §9.1)

/** A record's kind; `source`, `revision`, `record` and `recovery` are content addressed. */
export type RecordKind = 'source' | 'revision' | 'record' | 'derived' | 'recovery';

/** A record key: a kind and a digest of 64 lowercase hex characters. */
export interface StoreKey {
  kind: RecordKind;
  digest: string;
}

/** One entry of `keys()`. */
export interface KeyInfo {
  key: StoreKey;
  /** When the record was last put (written or refreshed), in milliseconds since the epoch. */
  putTime: number;
  /** The record's size in bytes. */
  size: number;
}

/** What `swapHead` reports; a swap that certainly left the head as it was throws instead. */
export type SwapOutcome = 'swapped' | 'conflict' | 'indeterminate';

/** The points where tests can inject a failure (see each store's module). */
export type FailurePoint = 'readHead' | 'get' | 'put' | 'keys' | 'remove' | 'swap' | 'swap:mid' | 'swap:lost' | 'swap:after';

/**
 * A failure-injection hook for tests: called at each point of an operation; a truthy answer
 * (or a promise of one) injects a failure there.
 */
export type FailAt = (point: FailurePoint, detail?: { key?: StoreKey; keys?: StoreKey[]; generation?: number }) => unknown;

/** Options every store takes. */
export interface StoreOptions {
  /** The clock for put times, in milliseconds since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Failure injection, for tests. */
  failAt?: FailAt;
}

/** The persistence contract of one tenant (engine.md §9.1), with promises. */
export interface TenantStore {
  /** The head record's bytes, or null for an empty tenant. */
  readHead(): Promise<Uint8Array | null>;
  /** A record's bytes, or null. */
  get(key: StoreKey): Promise<Uint8Array | null>;
  /** Each record's bytes in the order asked, null for a missing one. */
  getMany(keys: readonly StoreKey[]): Promise<Array<Uint8Array | null>>;
  /**
   * Stores a record durably. The same bytes again only refresh its put time; different bytes
   * under an existing key reject with `CORRUPT`, except for `derived` records, which a put
   * replaces.
   */
  put(key: StoreKey, bytes: Uint8Array): Promise<void>;
  /**
   * Optional: puts several records at once with `put`'s contract for each (the IndexedDB
   * store writes them in one transaction, all or none). A commit uses it when present.
   */
  putMany?(records: ReadonlyArray<{ key: StoreKey; bytes: Uint8Array }>): Promise<void>;
  /**
   * Replaces the head with `next` if it still equals `expected` (null: no head). Rejects with
   * `STORE` when the head certainly did not move.
   */
  swapHead(expected: Uint8Array | null, next: Uint8Array): Promise<SwapOutcome>;
  /** Every record with its put time and size, for collection. */
  keys(): Promise<KeyInfo[]>;
  /**
   * Removes each listed record whose put time is still before `before` (never a `recovery`
   * record) and answers the keys it removed.
   */
  remove(keys: readonly StoreKey[], before: number): Promise<StoreKey[]>;
  /** Later calls reject. */
  close(): Promise<void>;
}

/** A store: the data of one data root, opened per tenant. */
export interface Store<T extends TenantStore = TenantStore> {
  readonly kind: 'memory' | 'files' | 'indexeddb';
  /** Opens one tenant (an id of compile.md §10.1, lower-cased). */
  open(tenant: string): Promise<T>;
  /** Releases the store's resources. */
  close(): Promise<void>;
}

/** The memory store. */
export interface MemoryStore extends Store {
  readonly kind: 'memory';
}

export interface MemoryOptions extends StoreOptions {
  /**
   * Refuse a content-addressed put whose bytes do not hash to its key and a head that
   * reaches a record never put. Default true.
   */
  strict?: boolean;
  /** Another memory store whose data this one shares, as a second connection would. */
  sharing?: MemoryStore;
}

/** No persistence; the strictest store (engine.md §9.2 rule 1). */
export declare function memory(options?: MemoryOptions): MemoryStore;

/** The package version, as compiled into the WebAssembly module. */
export declare function version(): string;

// ---------------------------------------------------------------------------------------
// Name rules (compile.md §10), for hosts that read folders themselves.

/** Throws the `INVALID` `LangonrockError` of compile.md §10.2 when `name` is not a valid bundle name. */
export declare function checkBundleName(name: string): void;
/** The path in NFC when it is a valid document path (compile.md §10.3); else throws `INVALID`. */
export declare function checkDocumentPath(path: string): string;
/** Whether a file name ends in `.md` (any case): the files a folder read takes. */
export declare function endsWithMd(name: string): boolean;
/** `s` in Unicode normalization form C, as the engine normalises names. */
export declare function nfc(s: string): string;

/** Where a link goes (compile.md §6.2–§6.3). */
export type LinkTarget =
  | { kind: 'external'; href: string }
  | { kind: 'anchor'; fragment: string }
  | { kind: 'concept'; id: string }
  /** A navigation document: the compiler ignores the link, a host can still show it. */
  | { kind: 'document'; bundle: string; path: string }
  /** Nothing resolves it; `create` names the note that would, when one can. */
  | { kind: 'unresolved'; create?: { bundle: string; path: string; title: string } };

/** A tenant's documents, indexed to follow links as the compiler resolves them. */
export interface LinkTargets {
  /** A Markdown link destination, written in `bundle`/`path`. */
  markdown(bundle: string, path: string, destination: string): LinkTarget;
  /** A wiki link: the text between `[[` and `]]`, written in `bundle`. */
  wiki(bundle: string, inner: string): LinkTarget;
  /** Releases it now rather than when it is collected. */
  free(): void;
}

/** Indexes `listSource()`'s entries (or any `{bundle, path, id?}` list) to follow links; throws `INVALID` for another shape. */
export declare function linkTargets(entries: ReadonlyArray<Pick<SourceEntry, 'bundle' | 'path' | 'id'>>): LinkTargets;

// ---------------------------------------------------------------------------------------
// The connection (js.md §1, §3, §5, §6).

export interface OpenOptions {
  /** A tenant id (compile.md §10.1). */
  tenant: string;
  store: Store;
  /** The connection never writes to the store. Default false. */
  readOnly?: boolean;
  /** The read date and commit times. Default `() => new Date()`. */
  now?: () => Date;
  /**
   * How long after an operation a writable connection writes the head's derived record
   * (engine.md §9.1 rule 4), in milliseconds. Default 1,000. A host whose commits should not
   * wait for the encoding (a notes page saving every few seconds) sets it longer and calls
   * `flushDerived()` when it goes away.
   */
  derivedDelayMs?: number;
}

/** Bounds on every exchange of a remote connection (docs/remote.md). */
export interface RemoteLimits {
  /** From sending a request to the answer's headers, in ms. Default 120,000. */
  answerMs?: number;
  /** The longest pause inside an answer's body, in ms. Default 30,000. */
  stallMs?: number;
  /** The largest answer body, in bytes. Default 256 MiB. */
  maxBody?: number;
}

/** The options of `open(dsn, options)`. */
export interface DsnOptions {
  /** The connection never writes. Default false. */
  readOnly?: boolean;
  /** An `okf:` DSN's read date and commit times. Default `() => new Date()`. */
  now?: () => Date;
  /** A remote DSN's bounds. */
  limits?: RemoteLimits;
}

/**
 * `open(options)`: a connection to one tenant of a store; `open(dsn, options?)`: to what a DSN
 * names (docs/remote.md): `okf+http://host:port?tenant=t&token=…` and `okf+https://…` in Node
 * and browsers, `okf+unix:///socket?tenant=t` and `okf:///data/root?tenant=t` in Node.
 */
export type Open = {
  (options: OpenOptions): Promise<Connection>;
  (dsn: string, options?: DsnOptions): Promise<Connection>;
};

/**
 * Opens a connection to one tenant (js.md §1) and loads the tenant's head. A tenant whose
 * stored data fails its digests still opens, failing closed: every read rejects with the
 * `CORRUPT` error, while `verify()` and `repair()` work on it. A remote connection sends
 * one request (the manifest), so an unreachable server or a refused token fails here; its
 * `gc`, `verify`, `repair`, `documents`, `importDocuments`, `manifestRows`, `searchRows` and
 * `concept` reject with `INVALID` `<op> is not available over a remote connection`.
 */
export declare const open: Open;

/**
 * A compile diagnostic: `warn`, or `info` for the one note a document without frontmatter
 * gets (a plain Markdown concept; docs/import.md).
 */
export interface Diagnostic {
  level: 'warn' | 'info';
  bundle: string;
  /** Bundle-relative. */
  path: string;
  message: string;
}

export interface GetOptions {
  section?: string;
  offset?: number;
  limit?: number;
  find?: string;
  /** Address the whole stored text instead of the body. */
  source?: boolean;
}

/** A slice of one concept (read.md §3.2). Offsets are UTF-16 code units. */
export interface Slice {
  text: string;
  start: number;
  end: number;
  total: number;
  /** With `find`: the first 20 match offsets. */
  matches?: number[];
  /** With `find`: the number of all matches. */
  matchCount?: number;
  /** With `source`. */
  bundle?: string;
  /** With `source`. */
  path?: string;
  /** With `source`: the source hash. */
  hash?: string;
}

export interface SearchOptions {
  k?: number;
  bundle?: string;
  /** One-hop expansion; default true. */
  expand?: boolean;
}

/** One manifest row as data: the TSV's cells (`-` as the TSV writes it), with `links` as a
 * list, plus the document's `path` and its compiled `title`. */
export interface Row {
  id: string;
  bundle: string;
  path: string;
  kind: string;
  /** For the read date: `stale` once its `stale_after` date passed. */
  status: string;
  grain: string;
  summary: string;
  /** The compiled title; null when the concept has none. */
  title: string | null;
  /** Outgoing link ids, sorted; empty for `-`. */
  links: string[];
}

/** The manifest as data (`manifestRows`). */
export interface ManifestRows {
  tenant: string;
  /** Every bundle, sorted (the `# bundles:` line). */
  bundles: string[];
  rows: Row[];
}

/** One search row as data. */
export interface SearchHit extends Row {
  /** A direct hit's pointer into the body; null for `-` and for linked rows. */
  pos: number | null;
  /** Whether the row comes from the link expansion. */
  linked: boolean;
}

/** A search as data (`searchRows`): the search TSV's rows in its order. */
export interface SearchRows {
  query: string;
  /** The bundle filter as stored; null without one. */
  bundle: string | null;
  direct: number;
  linked: number;
  hits: SearchHit[];
}

/** One concept's compiled fields (`concept`). */
export interface ConceptInfo extends Row {
  /** The frontmatter `description`, whole (the `summary` cell is cut from it); null if none. */
  description: string | null;
  /** Whether the stored text has a frontmatter block. */
  frontmatter: boolean;
  /** Where the body starts in the stored text, in UTF-16 units. */
  bodyStart: number;
  /** The body's sections in document order; offsets are UTF-16 units of the body. */
  sections: Array<{ name: string; start: number; end: number }>;
  /** The document's diagnostic messages. */
  diagnostics: string[];
}

export interface SnapshotInfo {
  snapshot: string;
  concepts: number;
}

export interface SourceEntry {
  bundle: string;
  path: string;
  hash: string;
  /** UTF-8 byte length. */
  bytes: number;
  /** Absent for navigation documents. */
  id?: string;
}

export interface SourceText {
  content: string;
  hash: string;
}

export interface Renamed {
  from: string;
  to: string;
}

export interface WriteResult {
  hash: string;
  revision: string;
  snapshot: string;
  concepts: number;
  /** Absent for a navigation document. */
  id?: string;
  renamed: Renamed[];
  diagnostics: Diagnostic[];
}

export interface DeleteResult {
  revision: string;
  snapshot: string;
  concepts: number;
  renamed: Renamed[];
}

/** engine.md §5.4. */
export interface RevisionResult {
  revision: string;
  snapshot: string;
  concepts: number;
  bundles: string[];
  diagnostics: Diagnostic[];
}

export type Change =
  | { operation: 'write'; bundle: string; path: string; content: string; replaces?: string }
  | { operation: 'delete'; bundle: string; path: string; replaces: string };

export interface TransactRequest {
  changes: Change[];
  expectedRevision?: string;
}

export interface RevisionInfo {
  revision: string;
  parent: string | null;
  snapshot: string;
  /** ISO-8601 UTC with milliseconds. */
  created: string;
  concepts: number;
  bundles: string[];
}

export interface HistoryOptions {
  /** A cursor from a previous page's `next`. */
  before?: string;
  /** 1 to 100; default 20. */
  limit?: number;
}

export interface HistoryPage {
  revisions: RevisionInfo[];
  next?: string;
}

export interface RestoreRequest {
  revision: string;
  expectedRevision: string;
}

export interface GcOptions {
  /** Revisions to keep along the head's chain; default 10. */
  keep?: number;
  dryRun?: boolean;
  /** Nothing written within this many milliseconds is removed; default 3,600,000. */
  graceMs?: number;
}

export interface GcResult {
  tenant: string;
  kept: string[];
  /** Revisions that left retained history (history and restore no longer reach them). */
  droppedRevisions: number;
  removedRevisions: number;
  removedRecords: number;
  bytesFreed: number;
  /** Records out of reach but put within the grace period: they stay for a later gc. */
  pendingRecords: number;
  pendingBytes: number;
  /** When the last of them leaves its grace period (ms since the epoch), or null. */
  pendingUntil: number | null;
  dryRun: boolean;
}

export interface VerifyIssue {
  artifact: string;
  message: string;
}

export interface VerifyResult {
  tenant: string;
  ok: boolean;
  head: string | null;
  verifiedRevisions: string[];
  issues: VerifyIssue[];
}

export interface RepairRequest {
  revision: string;
  /** The head record's digest as `verify` reported it; null for none. */
  expectedHead: string | null;
}

export interface RepairResult {
  tenant: string;
  head: string;
  revision: string;
}

/** The tool names of agent.md §2. */
export type ToolName = 'manifest' | 'search' | 'get' | 'snapshot' | 'write' | 'delete' | 'transact' | 'history' | 'restore';

export interface ToolOptions {
  databaseTools?: boolean;
  readOnly?: boolean;
}

/** A JSON Schema object. */
export type JsonSchema = { [key: string]: unknown };

export interface Tool {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: JsonSchema;
}

export interface CallToolResult {
  text: string;
  isError: boolean;
}

/** The result of an import (cli.md §4). */
export interface ImportResult {
  revision: string;
  snapshot: string;
  concepts: number;
  bundles: string[];
  /** The diagnostics of the folder's documents. */
  diagnostics: Diagnostic[];
  /** Whether the snapshot id equals the previous head's. */
  reused: boolean;
  /** Whether anything was committed (a revision or a new baseline). */
  committed: boolean;
}

/** A document as `documents()` lists it and an import takes it. */
export interface DocumentText {
  bundle: string;
  path: string;
  content: string;
}

/** A connection to one tenant (js.md §3), local or remote (docs/remote.md). */
export interface Connection {
  /** The tenant id, lower-cased; empty for a remote DSN that lets the token name it. */
  readonly tenant: string;
  /** `true` on a connection to a `langonrock serve`. */
  readonly remote?: boolean;
  /** Whether the connection never writes. */
  readonly readOnly: boolean;
  /** The manifest TSV of the tenant, or of one bundle (read.md §2). */
  manifest(bundle?: string): Promise<string>;
  /** Slices by public id, in result order; missing ids are absent. */
  get(ids: string[], options?: GetOptions): Promise<Map<string, Slice>>;
  /** The search TSV (search.md §5). */
  search(query: string, options?: SearchOptions): Promise<string>;
  snapshot(): Promise<SnapshotInfo>;
  /** The manifest as data: the rows of `manifest(bundle)`, in its order. */
  manifestRows(bundle?: string): Promise<ManifestRows>;
  /** A search as data: the rows of `search(query, options)`, in its order. */
  searchRows(query: string, options?: SearchOptions): Promise<SearchRows>;
  /** One concept's compiled fields; null for an unknown id. */
  concept(id: string): Promise<ConceptInfo | null>;
  listSource(): Promise<SourceEntry[]>;
  /** null when there is no such document. */
  readSource(bundle: string, path: string): Promise<SourceText | null>;
  write(bundle: string, path: string, content: string, replaces?: string): Promise<WriteResult>;
  delete(bundle: string, path: string, replaces: string): Promise<DeleteResult>;
  deleteBundle(bundle: string): Promise<RevisionResult>;
  transact(request: TransactRequest): Promise<RevisionResult>;
  history(options?: HistoryOptions): Promise<HistoryPage>;
  restore(request: RestoreRequest): Promise<RevisionResult>;
  gc(options?: GcOptions): Promise<GcResult>;
  verify(): Promise<VerifyResult>;
  repair(request: RepairRequest): Promise<RepairResult>;
  /** The tools of agent.md §2 for these options, in order, with the one table's texts. */
  tools(options?: ToolOptions): Tool[];
  /** Exactly what the MCP server answers; never rejects. */
  callTool(name: string, args?: unknown): Promise<CallToolResult>;
  /**
   * Schedules a put of the head's derived record when one is due (engine.md §9.1 rule 4), as
   * the connection does after its operations. A read-only connection never does.
   */
  keepDerived(): void;
  /**
   * Readies a connection that opened from a derived record for commits (the work its first
   * commit would do otherwise); queued like a commit. Resolves whether there was any.
   */
  warm(): Promise<boolean>;
  /** Writes a pending derived record now; resolves once stored (or at once). Never rejects. */
  flushDerived(): Promise<void>;
  /** The advice sentence of agent.md §7.2 for the manifest as last read; null if that fails. */
  adviceNow(): string | null;
  /** Every document, sorted by bundle then path (what an export writes). */
  documents(): Promise<DocumentText[]>;
  /**
   * `import` (cli.md §4) of documents read from the folder keyed `location`; `check` runs
   * after the commit is prepared and before it is stored, and a message from it aborts.
   * The Node entry's `importFolder` reads the folder and calls this.
   */
  importDocuments(
    location: string,
    documents: DocumentText[],
    options?: { strict?: boolean; check?: () => Promise<string | undefined> | string | undefined },
  ): Promise<ImportResult>;
  /** Waits for a commit in flight, then releases the store. */
  close(): Promise<void>;
}

/** The part of the MCP SDK's server that callers use: connect a transport, close. */
export interface McpServerLike {
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * `createMcpServer(connection, advice?, options?)` (js.md §6): a server of
 * `@modelcontextprotocol/sdk`, loaded only when called. `advice`: a string as given, null for
 * none, omitted to compute it.
 */
export type CreateMcpServer = (
  connection: Pick<Connection, 'callTool' | 'manifest' | 'adviceNow'>,
  advice?: string | null,
  options?: ToolOptions,
) => Promise<McpServerLike>;

/** An MCP server over a connection (js.md §6); connect a transport to serve it. */
export declare const createMcpServer: CreateMcpServer;

// ---------------------------------------------------------------------------------------
// The folder rule (docs/import.md), for hosts that walk a folder themselves.

/** One entry a folder walk found: its path relative to the folder (with `/`) and kind. */
export interface FolderEntry {
  path: string;
  kind: 'file' | 'link' | 'dir' | 'other';
}

export interface FolderPlanOptions {
  /** The whole folder is this bundle (`--bundle`). */
  bundle?: string;
  /** The folder's own name, which names the bundle of a folder that is one bundle. */
  name?: string;
  /** The folder as the user named it, for messages. */
  shown: string;
}

/** How a folder maps to documents. */
export interface FolderPlan {
  layout: 'bundles' | 'one';
  /** With layout `one`: the bundle. */
  bundle?: string;
  /** With layout `one`: whether `options.bundle` named it. */
  chosen?: boolean;
  bundles: string[];
  /** Sorted by bundle, then path; `entry` indexes `entries`. */
  documents: Array<{ entry: number; bundle: string; path: string }>;
  /** The decision in one line (`reading <shown> as …`). */
  line: string;
}

/** Plans a folder import; throws `INVALID` (`nothing to import in <shown>: <reason>`, bad names). */
export declare function planFolder(entries: FolderEntry[], options: FolderPlanOptions): FolderPlan;
