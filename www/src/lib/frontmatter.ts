// Frontmatter in the editor: finds the block as compile.md §2 does, reads the four fields the
// form shows, and rewrites one field while keeping every other key, comment and the body.

import { parseDocument, isMap } from 'yaml';

export interface Split {
  /** A leading U+FEFF, or ''. */
  bom: string;
  /** Whether the text has a frontmatter block. */
  has: boolean;
  /** The opening fence line with its line break (`---\n`), or ''. */
  open: string;
  /** The YAML between the fences, with its final line break. */
  yaml: string;
  /** The closing fence line with its line break (if any), or ''. */
  close: string;
  /** The text after the block. */
  body: string;
}

const BLOCK = /^(---[ \t]*\r?\n)([\s\S]*?\r?\n)(---[ \t]*(?:\r?\n|$))/;

export function split(text: string): Split {
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const rest = text.slice(bom.length);
  const m = BLOCK.exec(rest);
  if (!m) return { bom, has: false, open: '', yaml: '', close: '', body: rest };
  return { bom, has: true, open: m[1], yaml: m[2], close: m[3], body: rest.slice(m[0].length) };
}

export const FIELDS = ['type', 'title', 'description', 'status'] as const;
export type Field = (typeof FIELDS)[number];
export type Fields = Record<Field, string>;

export interface ReadFields {
  fields: Fields;
  /** Why the form cannot edit this text (YAML that does not parse or is not a mapping). */
  problem?: string;
}

/** The form's fields: string values, or '' when absent or not a string. */
export function readFields(text: string): ReadFields {
  const fields: Fields = { type: '', title: '', description: '', status: '' };
  const s = split(text);
  if (!s.has) return { fields };
  const doc = parseDocument(s.yaml, { uniqueKeys: true });
  if (doc.errors.length) return { fields, problem: `the frontmatter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}` };
  const value = doc.contents;
  if (value === null) return { fields };
  if (!isMap(value)) return { fields, problem: 'the frontmatter is not a mapping' };
  for (const key of FIELDS) {
    const v = doc.get(key);
    if (typeof v === 'string') fields[key] = v;
  }
  return { fields };
}

/**
 * The text with `field` set to `value` in its frontmatter (removed when `value` is empty),
 * creating a frontmatter block when there is none. Throws when the YAML cannot be edited.
 */
export function setField(text: string, field: Field, value: string): string {
  const s = split(text);
  const eol = s.has ? (s.open.endsWith('\r\n') ? '\r\n' : '\n') : text.includes('\r\n') ? '\r\n' : '\n';
  const doc = parseDocument(s.has ? s.yaml : '', { uniqueKeys: true });
  if (doc.errors.length) throw new Error(`the frontmatter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error('the frontmatter is not a mapping');
  if (value === '') doc.delete(field);
  else doc.set(field, value);
  let yaml = doc.contents === null || (isMap(doc.contents) && doc.contents.items.length === 0 && !doc.commentBefore && !doc.comment) ? '' : doc.toString({ lineWidth: 0 });
  if (eol === '\r\n') yaml = yaml.replace(/\r?\n/g, '\r\n');
  if (yaml !== '' && !yaml.endsWith('\n')) yaml += eol;
  if (yaml === '') yaml = eol;
  const open = s.has ? s.open : `---${eol}`;
  let close = s.has ? s.close : `---${eol}`;
  if (!/\r?\n$/.test(close) && s.body !== '') close += eol;
  const body = s.has ? s.body : s.body;
  return s.bom + open + yaml + close + body;
}

/** Applies every field of `fields` that differs from the text's current values. */
export function setFields(text: string, fields: Partial<Fields>): string {
  const current = readFields(text).fields;
  let out = text;
  for (const key of FIELDS) {
    const v = fields[key];
    if (v !== undefined && v !== current[key]) out = setField(out, key, v);
  }
  return out;
}
