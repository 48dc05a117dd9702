// A line diff as a block of lines, for history and conflicts.

import { h } from '../lib/dom.js';
import { diffLines } from '../lib/diff.js';

/** A diff of `a` to `b` as a block of lines. */
export function diffBlock(a: string, b: string, label: string): HTMLElement {
  const lines = diffLines(a, b);
  return h(
    'div',
    { class: 'diff', role: 'region', 'aria-label': label, tabindex: '0' },
    lines.length === 0
      ? h('div', { class: 'skip' }, 'No difference.')
      : lines.map((l) =>
          l.op === '…'
            ? h('div', { class: 'skip' }, `… ${l.skipped} unchanged line${l.skipped === 1 ? '' : 's'}`)
            : h('div', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : '' }, `${l.op} ${l.text}`),
        ),
  );
}
