// Frontmatter in the editor: finds the block as compile.md §2 does, reads the four fields the
// form shows, and rewrites one field while keeping every other key, comment and the body.

import { parseDocument, isMap, stringify } from 'yaml';

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

/** A string as one YAML scalar, quoted only when it must be. */
function scalar(value: string): string {
  return stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
}

/**
 * The frontmatter YAML with `field` set to `value` (removed when empty), changing only that
 * key's line when it is a one-line `key: value`, so every other line stays as written.
 */
function editYaml(yaml: string, field: Field, value: string, eol: string): string {
  const doc = parseDocument(yaml, { uniqueKeys: true });
  if (doc.errors.length) throw new Error(`the frontmatter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error('the frontmatter is not a mapping');
  const lines = yaml.split(/(?<=\n)/);
  const key = new RegExp(`^${field}[ \\t]*:(?:[ \\t]|\\r?\\n|$)`);
  const at = lines.findIndex((l) => key.test(l));
  const oneLine =
    at >= 0 &&
    !/:[ \t]*(?:[|>][^\n]*)?\r?\n?$/.test(lines[at].replace(/[ \t]+#.*$/, '')) &&
    (at + 1 >= lines.length || !/^[ \t-]/.test(lines[at + 1]));
  if (at >= 0 && oneLine) {
    if (value === '') lines.splice(at, 1);
    else lines[at] = `${field}: ${scalar(value)}${lines[at].endsWith('\r\n') ? '\r\n' : lines[at].endsWith('\n') ? '\n' : ''}`;
    return lines.join('');
  }
  if (at < 0 && !doc.has(field)) {
    if (value === '') return yaml;
    const sep = yaml === '' || yaml.endsWith('\n') ? '' : eol;
    return `${yaml}${sep}${field}: ${scalar(value)}${eol}`;
  }
  // A key written over several lines, or in a form the line match does not know: rewrite
  // the mapping through the YAML library (comments are kept; formatting may change).
  if (value === '') doc.delete(field);
  else doc.set(field, value);
  let out = doc.toString({ lineWidth: 0 });
  if (eol === '\r\n') out = out.replace(/\r?\n/g, '\r\n');
  return out;
}

/**
 * The text with `field` set to `value` in its frontmatter (removed when `value` is empty),
 * creating a frontmatter block when there is none. Throws when the YAML cannot be edited.
 */
export function setField(text: string, field: Field, value: string): string {
  const s = split(text);
  if (!s.has) {
    if (value === '') return text;
    const eol = text.includes('\r\n') ? '\r\n' : '\n';
    return `${s.bom}---${eol}${field}: ${scalar(value)}${eol}---${eol}${s.body}`;
  }
  const eol = s.open.endsWith('\r\n') ? '\r\n' : '\n';
  let yaml = editYaml(s.yaml, field, value, eol);
  // The block needs a line between its fences (compile.md §2.3): keep an empty one.
  if (yaml === '') yaml = eol;
  return s.bom + s.open + yaml + s.close + s.body;
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
