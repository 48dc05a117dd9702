// The one adapter between the engine's answers and the page's rows. Everything the page knows
// about the engine's text formats, and every compiler rule the page has to stand in for until
// the package answers with structured rows, is here and nowhere else:
//
// - the manifest TSV (docs/format.md, read.md §2) and the search TSV (docs/search.md) parsed
//   into rows;
// - a concept's title and full description (the manifest has neither: its summary is cut at
//   120 units), read from the stored source by compile.md §2–§3.1's rules;
// - the names of a concept's sections (the engine names them only in the error of a `get`
//   for a section no concept has: `-`) and each heading's text and level.
//
// When the package gives rows as objects with titles, this file is the one to change. It runs
// in the engine worker only.

import type { Connection } from 'langonrock';
import { parseDocument, isMap } from 'yaml';
import { split } from './frontmatter.js';
import { plainHeading } from './markdown.js';

export interface Row {
  id: string;
  bundle: string;
  kind: string;
  status: string;
  grain: string;
  summary: string;
  /** Outgoing link ids; empty for `-`. */
  links: string[];
}

export interface Manifest {
  tenant: string;
  bundles: string[];
  rows: Row[];
}

export interface Hit extends Row {
  /** A direct hit's pointer into the body; null for `-` and for linked hits. */
  pos: number | null;
  direct: boolean;
}

export interface SearchResult {
  query: string;
  direct: number;
  linked: number;
  hits: Hit[];
}

const COLUMNS = 'id\tbundle\tkind\tstatus\tgrain\tsummary\tlinks';

function row(cells: string[]): Row {
  return {
    id: cells[0],
    bundle: cells[1],
    kind: cells[2],
    status: cells[3],
    grain: cells[4],
    summary: cells[5],
    links: cells[6] === '-' || cells[6] === undefined ? [] : cells[6].split(' '),
  };
}

function header(lines: string[], name: string): string | undefined {
  const prefix = `# ${name}:`;
  const line = lines.find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : line.slice(prefix.length).trim();
}

export function parseManifest(text: string): Manifest {
  const lines = text.split('\n');
  const rows: Row[] = [];
  let inRows = false;
  for (const line of lines) {
    if (!inRows) {
      if (line === COLUMNS) inRows = true;
      continue;
    }
    if (line === '') continue;
    rows.push(row(line.split('\t')));
  }
  const bundles = header(lines, 'bundles');
  return { tenant: header(lines, 'tenant') ?? '', bundles: bundles ? bundles.split(' ') : [], rows };
}

export function parseSearch(text: string): SearchResult {
  const lines = text.split('\n');
  const counts = /^# hits: (\d+) direct, (\d+) linked$/.exec(lines.find((l) => l.startsWith('# hits:')) ?? '');
  const direct = counts ? Number(counts[1]) : 0;
  const linked = counts ? Number(counts[2]) : 0;
  const query = (lines.find((l) => l.startsWith('# query:')) ?? '# query:').slice('# query:'.length).trimStart();
  const hits: Hit[] = [];
  let inRows = false;
  for (const line of lines) {
    if (!inRows) {
      if (line.startsWith(COLUMNS)) inRows = true;
      continue;
    }
    if (line === '') continue;
    const cells = line.split('\t');
    const isDirect = hits.length < direct;
    const pos = cells[7];
    hits.push({ ...row(cells), pos: isDirect && pos !== '-' && pos !== undefined ? Number(pos) : null, direct: isDirect });
  }
  return { query, direct, linked, hits };
}

export interface NoteFields {
  /** The compiled title (compile.md §3.1), or null. */
  title: string | null;
  /** `description` as written when it is a non-empty string, or null. */
  description: string | null;
  hasFrontmatter: boolean;
}

const flatten = (s: string) => s.replace(/\s+/gu, ' ').trim();

// A flat mapping of one-line plain scalars (`key: words`), the common case, is read without
// a YAML parse; anything else goes through the YAML library.
const FLAT_LINE = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+([^\s'"|>{[\]}&*!%@`#?,-][^\n]*?))?[ \t]*$/;

// Plain scalars that YAML reads as something other than a string (null, booleans, numbers).
const NOT_STRING = /^(?:null|Null|NULL|~|true|True|TRUE|false|False|FALSE|[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

function flatMapping(yaml: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const line of yaml.split(/\r?\n/)) {
    if (line === '' || /^#/.test(line)) continue;
    const m = FLAT_LINE.exec(line);
    if (!m) return null;
    const value = m[2] ?? '';
    if (/:([ \t]|$)| #|\t#/.test(value) || NOT_STRING.test(value) || out.has(m[1])) return null;
    out.set(m[1], value);
  }
  return out;
}

/** A note's title and description from its stored text (compile.md §2, §3.1). */
export function noteFields(source: string): NoteFields {
  const s = split(source);
  if (!s.has) return { title: firstHeading(s.body), description: null, hasFrontmatter: false };
  const flat = flatMapping(s.yaml);
  if (flat) {
    const t = flatten(flat.get('title') ?? '');
    const d = (flat.get('description') ?? '').trim();
    return { title: t || null, description: d || null, hasFrontmatter: true };
  }
  const doc = parseDocument(s.yaml, { uniqueKeys: true });
  if (doc.errors.length || !isMap(doc.contents)) return { title: null, description: null, hasFrontmatter: true };
  const title = doc.get('title');
  const description = doc.get('description');
  const t = typeof title === 'string' ? flatten(title) : '';
  return { title: t || null, description: typeof description === 'string' && description.trim() !== '' ? description : null, hasFrontmatter: true };
}

/** The plain text of the first top-level heading (not in a quote, list or footnote). */
function firstHeading(body: string): string | null {
  const lines = body.split(/\r\n|\r|\n/);
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(l);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && /^ {0,3}[`~]+[ \t]*$/.test(l)) fence = null;
      continue;
    }
    if (f) {
      fence = f[1];
      continue;
    }
    const h = plainHeading(l, lines[i + 1], i > 0 ? lines[i - 1] : '');
    if (h) return flatten(h.text) || null;
  }
  return null;
}

export interface SectionSpan {
  name: string;
  start: number;
  end: number;
  /** The heading's text, or '' for the `body` section. */
  text: string;
  level: number;
}

/**
 * A concept's sections in table order with their ranges in `body` and their headings. The
 * names come from the engine (see the file comment), each section's text from
 * `get(ids, {section})`; sections start at distinct heading lines in document order, so each
 * one is found in the body after the previous one's start.
 */
export async function sections(conn: Connection, id: string, body: string): Promise<SectionSpan[]> {
  const answer = await conn.callTool('get', { ids: [id], section: '-' });
  const line = answer.text.split('\n')[0];
  const marker = ' no section "-": ';
  const at = line.indexOf(marker);
  if (answer.isError || at < 0) return [];
  const names = line.slice(at + marker.length);
  if (names === '-') return [];
  const list = names.split(' ');
  const slices = await Promise.all(list.map((name) => conn.get([id], { section: name })));
  const out: SectionSpan[] = [];
  let from = -1;
  list.forEach((name, i) => {
    const s = slices[i].get(id);
    if (!s) return;
    const start = name === 'body' && from < 0 ? 0 : body.indexOf(s.text, from + 1);
    if (start < 0) return;
    from = start;
    const [first, second] = s.text.split(/\r\n|\r|\n/, 2);
    const heading = name === 'body' && start === 0 ? null : plainHeading(first, second, '');
    out.push({ name, start, end: start + s.text.length, text: heading?.text ?? (name === 'body' ? '' : name), level: heading?.level ?? 0 });
  });
  return out;
}
