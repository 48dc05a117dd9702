// Line diffs (for history and conflicts) and the three-way merge of a conflict, on node-diff3.

import { diffComm, diff3Merge } from 'node-diff3';

export type DiffLine = { op: ' ' | '+' | '-'; text: string } | { op: '…'; skipped: number };

/** Splits keeping nothing of the line breaks; `a\r\nb` and `a\nb` give the same lines. */
export function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split(/\r\n|\r|\n/);
  if (out[out.length - 1] === '') out.pop();
  return out;
}

/** A unified line diff of `a` to `b`, with `context` unchanged lines around each change. */
export function diffLines(a: string, b: string, context = 3): DiffLine[] {
  const raw: Array<{ op: ' ' | '+' | '-'; text: string }> = [];
  for (const part of diffComm(lines(a), lines(b))) {
    if (part.common) for (const t of part.common) raw.push({ op: ' ', text: t });
    else {
      for (const t of part.buffer1) raw.push({ op: '-', text: t });
      for (const t of part.buffer2) raw.push({ op: '+', text: t });
    }
  }
  const keep = raw.map(() => false);
  raw.forEach((l, i) => {
    if (l.op !== ' ') for (let j = Math.max(0, i - context); j <= Math.min(raw.length - 1, i + context); j++) keep[j] = true;
  });
  const out: DiffLine[] = [];
  let skipped = 0;
  raw.forEach((l, i) => {
    if (keep[i]) {
      if (skipped) out.push({ op: '…', skipped });
      skipped = 0;
      out.push(l);
    } else skipped++;
  });
  if (skipped && out.length) out.push({ op: '…', skipped });
  return out;
}

export interface Merge {
  text: string;
  /** The number of regions both sides changed differently (marked in the text). */
  conflicts: number;
}

/**
 * Merges `mine` and `theirs`, both edited from `base`. Regions that only one side changed take
 * that side; regions both changed differently keep both, between conflict markers, so nothing
 * is lost. Line breaks follow `theirs` (`\r\n` when it uses them).
 */
export function merge(base: string, mine: string, theirs: string): Merge {
  const eol = theirs.includes('\r\n') ? '\r\n' : '\n';
  const out: string[] = [];
  let conflicts = 0;
  for (const region of diff3Merge(lines(mine), lines(base), lines(theirs), { excludeFalseConflicts: true })) {
    if (region.ok) out.push(...region.ok);
    else if (region.conflict) {
      conflicts++;
      out.push('<<<<<<< yours', ...region.conflict.a, '=======', ...region.conflict.b, '>>>>>>> theirs');
    }
  }
  const trailing = mine.endsWith('\n') || theirs.endsWith('\n') ? eol : '';
  return { text: out.join(eol) + (out.length ? trailing : ''), conflicts };
}
