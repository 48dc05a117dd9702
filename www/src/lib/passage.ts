// Finding the query's words in a passage: whole-word occurrences (docs/search.md's word rules:
// runs of letters and numbers, compared lower-cased), the densest cluster of them, and the
// passage cut around it with the words marked. Used by the worker for the results list and
// by the page to mark the words in a rendered note.

import type { Marked } from '../engine/types.js';

export interface Occurrence {
  at: number;
  end: number;
  word: string;
}

export function queryWords(query: string): string[] {
  return [...new Set((query.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase()))];
}

const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);

/** Whole-word occurrences of `words` (lower-cased) in `text`, sorted by offset. */
export function occurrences(text: string, words: readonly string[]): Occurrence[] {
  const lower = text.toLowerCase();
  // Lower-casing that changes the length (rare) would shift offsets: compare as written then.
  const hay = lower.length === text.length ? lower : text;
  const before = (i: number) => {
    if (i <= 0) return undefined;
    const c = hay.charCodeAt(i - 1);
    return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? hay.slice(i - 2, i) : hay[i - 1];
  };
  const after = (i: number) => (i < hay.length ? String.fromCodePoint(hay.codePointAt(i)!) : undefined);
  const out: Occurrence[] = [];
  for (const word of words) {
    if (word === '') continue;
    let i = hay.indexOf(word);
    while (i >= 0) {
      if (!isWord(before(i)) && !isWord(after(i + word.length))) out.push({ at: i, end: i + word.length, word });
      i = hay.indexOf(word, i + 1);
    }
  }
  return out.sort((a, b) => a.at - b.at || a.end - b.end);
}

/** The densest cluster of occurrences: the most distinct words within `span` units. */
export function cluster(occ: Occurrence[], span = 2000): Occurrence[] {
  let best: Occurrence[] = [];
  let bestCount = 0;
  for (let i = 0; i < occ.length; i++) {
    const window = [occ[i]];
    for (let j = i + 1; j < occ.length && occ[j].end <= occ[i].at + span; j++) window.push(occ[j]);
    const count = new Set(window.map((o) => o.word)).size;
    if (count > bestCount) {
      bestCount = count;
      best = window;
    }
  }
  return best;
}

/**
 * About `width` units of `text` around the densest cluster of `words`, on one line, with the
 * words marked; whole words at both ends, an ellipsis where text was cut.
 */
export function passage(text: string, words: readonly string[], width = 160): Marked {
  const found = cluster(occurrences(text, words), width);
  let from = found.length ? found[0].at : 0;
  let to = found.length ? Math.max(found[found.length - 1].end, from) : 0;
  const room = Math.max(0, width - (to - from));
  from = Math.max(0, from - Math.floor(room / 3));
  to = Math.min(text.length, to + room - Math.floor(room / 3));
  if (from > 0) {
    const space = text.lastIndexOf(' ', from);
    const nl = text.lastIndexOf('\n', from);
    const cut = Math.max(space, nl);
    from = cut > from - 30 && cut >= 0 ? cut + 1 : from;
  }
  if (to < text.length) {
    const space = text.indexOf(' ', to);
    to = space >= 0 && space < to + 30 ? space : to;
  }
  const out: Marked = [];
  const push = (s: string, marked: boolean) => {
    const flat = s.replace(/\s+/gu, ' ');
    if (flat === '') return;
    const last = out[out.length - 1];
    if (last && last[1] === marked) last[0] += flat;
    else out.push([flat, marked]);
  };
  if (from > 0) push('… ', false);
  let at = from;
  for (const o of occurrences(text.slice(from, to), words)) {
    if (o.at + from < at) continue;
    push(text.slice(at, o.at + from), false);
    push(text.slice(o.at + from, o.end + from), true);
    at = o.end + from;
  }
  push(text.slice(at, to), false);
  if (to < text.length) push(' …', false);
  if (out.length && !out[0][1]) out[0][0] = out[0][0].replace(/^ /, '');
  return out;
}

/** The sentence of `text` around [start, end): from the last sentence end before it to the next after it. */
export function sentence(text: string, start: number, end: number, max = 240): Marked {
  const ends = /[.!?](?=\s|$)/g;
  let from = 0;
  let to = text.length;
  for (let m = ends.exec(text); m; m = ends.exec(text)) {
    if (m.index < start) from = m.index + 1;
    else if (m.index >= end) {
      to = m.index + 1;
      break;
    }
  }
  if (start - from > max / 2) from = Math.max(from, text.lastIndexOf(' ', start - max / 2) + 1);
  if (to - end > max / 2) {
    const space = text.indexOf(' ', end + max / 2);
    to = space >= 0 ? Math.min(to, space) : to;
  }
  const out: Marked = [];
  const head = text.slice(from, start).trimStart();
  if (from > 0 && !/[.!?]\s*$/.test(text.slice(0, from))) out.push(['… ', false]);
  if (head) out.push([head, false]);
  out.push([text.slice(start, end), true]);
  const tail = text.slice(end, to).trimEnd();
  if (tail) out.push([tail, false]);
  if (to < text.length && !/[.!?]$/.test(tail)) out.push([' …', false]);
  return out;
}
