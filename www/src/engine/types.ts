// What the page and its engine worker (src/engine/worker.ts) say to each other: requests by
// method name, answers, events, and the shapes of the view models the worker computes. Only
// plain data crosses (structured clone), so the page never holds the whole tenant.

import type { Diagnostic, RevisionInfo, RevisionResult, SourceText, Tool, WriteResult, DeleteResult, HistoryPage, CallToolResult } from 'langonrock';

/** An error as it crosses from the worker: the package's fields, kept. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  reason?: string;
  revision?: string;
  changes?: Array<{ index: number; reason: string }>;
  /** The browser's storage is full (a QuotaExceededError under a STORE failure). */
  quota?: boolean;
}

export type Request = { id: number; method: string; args: unknown[] };
export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };
export type WorkerEvent =
  | { event: 'data'; summary: Summary; cause: 'local' | 'elsewhere' }
  | { event: 'progress'; job: number; progress: ImportProgress }
  | { event: 'ready'; marks: Record<string, number>; early?: { hinted: number; served: number } }
  | { event: 'remember'; keys: string[] };

/** One bundle as the sidebar and the start page show it. */
export interface BundleSummary {
  name: string;
  concepts: number;
  draft: number;
  deprecated: number;
  stale: number;
  /** Stored documents, navigation documents included. */
  documents: number;
}

export interface Summary {
  tenant: string;
  database: string;
  snapshot: string;
  concepts: number;
  bundles: BundleSummary[];
}

/** A note as lists show it: the title first, the id second. */
export interface NoteRef {
  id: string;
  /** The title, or null when the note has none (lists then show the id). */
  title: string | null;
  bundle: string;
  path: string;
  status: string;
}

export interface NavDoc {
  bundle: string;
  path: string;
}

export interface BundleListing {
  bundle: string;
  notes: NoteRef[];
  navigation: NavDoc[];
}

/** Text with marked parts: `[text, marked]` pairs, in order. */
export type Marked = Array<[string, boolean]>;

export interface SearchHit extends NoteRef {
  direct: boolean;
  kind: string;
  summary: string;
  /** A direct hit's pointer into the body, or null. */
  pos: number | null;
  /** The passage at `pos` with the query's words marked; null for linked hits. */
  passage: Marked | null;
}

export interface SearchAnswer {
  query: string;
  direct: number;
  linked: number;
  hits: SearchHit[];
  /** Milliseconds the worker spent in all, and in the engine's search and its `get` of the passages. */
  ms: number;
  searchMs: number;
  passagesMs: number;
}

export interface OutlineEntry {
  /** The section's name from the engine (its `get` section). */
  name: string;
  /** The heading as a person reads it. */
  text: string;
  /** 1–6 for a heading; 0 for the text before the first one. */
  level: number;
  /** The body line it starts on. */
  line: number;
}

export interface Backlink extends NoteRef {
  /** The sentences around the links to the note, with the link text marked. */
  contexts: Marked[];
}

export interface ConceptModel {
  note: NoteRef;
  kind: string;
  grain: string;
  summary: string;
  /** The description as written in the frontmatter (not truncated), or null. */
  description: string | null;
  hasFrontmatter: boolean;
  hash: string;
  bytes: number;
  /** The body rendered to HTML (not yet sanitised), up to `renderedTo` characters of it. */
  html: string;
  bodyLength: number;
  renderedTo: number;
  outline: OutlineEntry[];
  links: NoteRef[];
  backlinks: Backlink[];
  diagnostics: Diagnostic[] | null;
  /** Opened from a search hit: the body lines of the passage and the query's words in it. */
  hit: { fromLine: number; toLine: number; words: string[] } | null;
}

export interface DocumentModel {
  bundle: string;
  path: string;
  html: string;
  hash: string;
}

export interface PreviewModel {
  html: string;
  renderedTo: number;
  length: number;
}

export interface NoteVersion {
  revision: string;
  created: string;
  change: 'added' | 'modified' | 'removed';
  /** The source hash after the change (absent when removed). */
  after?: string;
  before?: string;
}

export interface NoteHistoryPage {
  versions: NoteVersion[];
  /** A cursor to scan older revisions, absent at the end of the retained history. */
  next?: string;
  /** Revisions looked at for this page. */
  scanned: number;
}

export interface DocumentChange {
  bundle: string;
  path: string;
  change: 'added' | 'removed' | 'modified';
  before?: string;
  after?: string;
}

export interface RevisionModel {
  revision: string;
  parent: string | null;
  created: string;
  head: string | null;
  changes: DocumentChange[];
}

/** An import plan: what the chosen files are, before anything is committed. */
export interface ImportPlan {
  job: number;
  /** `bundles` (each folder a bundle) or `bundle` (the folder is one bundle). */
  layout: 'bundles' | 'bundle' | 'files';
  bundle: string | null;
  /** Why this layout was chosen, in words. */
  layoutReason: string;
  documents: number;
  bundles: string[];
  fresh: number;
  same: number;
  differs: number;
  /** A few of the differing documents, `bundle/path`. */
  differing: string[];
  /**
   * Notes an earlier import of this folder brought in that are gone from it now and are
   * unchanged here: the import deletes them (cli.md §4) unless they are kept.
   */
  missing: number;
  missingExamples: string[];
  /** Files whose names the store refuses: listed, never imported unless skipped. */
  invalid: Array<{ file: string; problem: string }>;
  /** Files that are not UTF-8. */
  undecodable: string[];
  warnings: string[];
  ignored: number;
  bytes: number;
  /** Milliseconds spent reading, hashing and comparing. */
  ms: number;
}

export interface ImportOptions {
  /** Import into this one bundle (the folder is one bundle, or loose files). */
  bundle: string | null;
  /** Loose files (a drop or a file picker), not a folder: committed with `transact`. */
  loose: boolean;
  /** The chosen folder's name: the import location is keyed by it. */
  folder: string;
}

export interface ImportChoices {
  /** Import the rest when some names are invalid. */
  skipInvalid: boolean;
  /** Keep the stored version of every note that differs from the folder. */
  keepStored: boolean;
  /** Keep the notes an earlier import of this folder brought in that are gone from it. */
  keepMissing: boolean;
}

export type ImportProgress =
  | { phase: 'read'; done: number; total: number }
  | { phase: 'compile'; documents: number }
  | { phase: 'store' }
  | { phase: 'cancelled' };

export interface ImportOutcome {
  committed: boolean;
  cancelled: boolean;
  revision: string;
  concepts: number;
  documents: number;
  diagnostics: Diagnostic[];
  ms: number;
}

export interface AgentModel {
  manifest: string;
  tools: Tool[];
  firstId: string | null;
}

/** The worker's API: each method's arguments and answer. */
export interface EngineApi {
  /** `hint`: the records the last open read, as the worker remembered them (src/engine/prefetch.ts). */
  open(database: string, tenant: string, hint: unknown): Summary;
  /** Builds the search index and readies the first commit (once; later calls wait for it). */
  warmUp(): void;
  summary(): Summary;
  listing(bundle: string): BundleListing;
  concept(id: string, options?: { q?: string; pos?: number; renderLimit?: number }): ConceptModel | null;
  refs(ids: string[]): NoteRef[];
  renderMore(id: string, from: number, limit: number): { html: string; renderedTo: number } | null;
  documentView(bundle: string, path: string): DocumentModel | null;
  preview(bundle: string, path: string, text: string, limit: number): PreviewModel;
  search(query: string): SearchAnswer;
  switcher(query: string, limit: number): NoteRef[];
  entry(bundle: string, path: string): { hash: string; id?: string } | null;
  readSource(bundle: string, path: string): SourceText | null;
  write(bundle: string, path: string, content: string, replaces: string | undefined): WriteResult;
  remove(bundle: string, path: string, replaces: string): DeleteResult;
  diagnosticsOf(bundle: string, path: string): Diagnostic[] | null;
  history(before: string | undefined, limit: number): HistoryPage;
  headRevision(): string | null;
  revision(id: string): RevisionModel;
  source(hash: string): string;
  noteHistory(bundle: string, path: string, before: string | undefined): NoteHistoryPage;
  restore(revision: string, expected: string): RevisionResult;
  latest(): RevisionInfo | null;
  agent(): AgentModel;
  manifest(): string;
  flushDerived(): void;
  callTool(name: string, args: unknown): CallToolResult;
  exportZip(): { bytes: Uint8Array; files: number };
  /**
   * Hands the worker a slice of the chosen files: each one's path, with the File itself for a
   * `.md` one (the worker reads its size and bytes, not the page).
   */
  importFiles(job: number, files: Array<{ rel: string; file: File | null }>): number;
  importPlan(job: number, options: ImportOptions): ImportPlan;
  importCommit(job: number, choices: ImportChoices): ImportOutcome;
  importCancel(job: number): boolean;
  importDiscard(job: number): void;
}

export type Method = keyof EngineApi;
