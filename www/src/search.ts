// Search as you type: every keystroke asks the engine worker to search (one at a time;
// keystrokes that arrive meanwhile collapse into the latest query) and lists the hits under
// the box, each with its title, its id and bundle, and the passage at its `pos` with the
// query's words marked. A direct hit opens the note at that passage. Keyboard: `/` focuses
// the box, arrows choose a hit, Enter opens it, Escape closes the list.
//
// Each answered keystroke's time from the key event to the rendered list is kept in
// `window.__notesPerf.search` (milliseconds), for the benchmark (bench/www) to report.

import type { App } from './app.js';
import type { SearchAnswer, SearchHit } from './engine/types.js';
import { h, fill } from './lib/dom.js';
import { badge, markedText, noteName, routes, showError, typing } from './ui.js';

export function setupSearch(app: App): void {
  const input = document.getElementById('q') as HTMLInputElement;
  const list = document.getElementById('results') as HTMLUListElement;
  let hits: SearchHit[] = [];
  let active = -1;
  let running = false;
  let pending: { query: string; stamp: number } | null = null;
  let shown = '';

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };

  const open = (hit: SearchHit, query: string) => {
    close();
    location.hash = hit.pos !== null ? routes.concept(hit.id, { q: query, pos: hit.pos }) : routes.concept(hit.id);
  };

  const setActive = (i: number) => {
    active = i;
    list.querySelectorAll('[role="option"]').forEach((el, j) => el.setAttribute('aria-selected', String(j === i)));
    if (i >= 0) {
      input.setAttribute('aria-activedescendant', `hit-${i}`);
      document.getElementById(`hit-${i}`)?.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };

  const show = (query: string, answer: SearchAnswer) => {
    hits = answer.hits;
    shown = query;
    const options: HTMLElement[] = [];
    hits.forEach((hit, i) => {
      if (i === answer.direct && answer.linked > 0) options.push(h('li', { role: 'presentation', class: 'group' }, 'Linked from the hits'));
      const secondary = [hit.title !== null && hit.title !== hit.id ? hit.id : null, hit.bundle].filter(Boolean).join(' · ');
      options.push(
        h(
          'li',
          {
            id: `hit-${i}`,
            role: 'option',
            'aria-selected': 'false',
            'data-id': hit.id,
            onmousedown: (e: Event) => e.preventDefault(),
            onclick: () => open(hit, query),
          },
          h('span', { class: 'hit-head' }, h('span', { class: 'hit-title' }, noteName(hit)), h('span', { class: 'hit-meta' }, secondary), badge(hit.status), hit.direct ? null : h('span', { class: 'badge linked' }, 'linked')),
          hit.passage ? h('span', { class: 'hit-passage-text' }, markedText(hit.passage)) : h('span', { class: 'hit-summary' }, hit.summary !== '-' ? hit.summary : ''),
        ),
      );
    });
    if (hits.length === 0) options.push(h('li', { role: 'presentation', class: 'empty' }, `No notes match “${query}”.`));
    fill(list, options);
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    active = -1;
    input.removeAttribute('aria-activedescendant');
  };

  const run = async (query: string, stamp: number) => {
    running = true;
    try {
      const answer = await app.call('search', query);
      if (input.value.trim() === query) {
        show(query, answer);
        window.__notesPerf.search.push({ query, total: performance.now() - stamp, engine: answer.ms, parts: { search: answer.searchMs, passages: answer.passagesMs } });
      }
    } catch (e) {
      showError(e, 'search');
    } finally {
      running = false;
      if (pending) {
        const next = pending;
        pending = null;
        if (next.query === '') close();
        else void run(next.query, next.stamp);
      }
    }
  };

  input.addEventListener('input', (e) => {
    const query = input.value.trim();
    if (query === '') {
      pending = null;
      shown = '';
      close();
      return;
    }
    if (query === shown && !list.hidden) return;
    if (running) pending = { query, stamp: e.timeStamp };
    else void run(query, e.timeStamp);
  });

  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (list.hidden && input.value.trim() !== '') void run(input.value.trim(), e.timeStamp);
      else if (hits.length) setActive(Math.min(hits.length - 1, active + 1));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      if (hits.length) setActive(Math.max(0, active - 1));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const hit = hits[active >= 0 ? active : 0];
      if (hit && !list.hidden) open(hit, shown);
    } else if (e.key === 'Escape') {
      if (!list.hidden) close();
      else input.value = '';
    }
  });

  input.addEventListener('blur', () => setTimeout(close, 150));
  input.addEventListener('focus', () => {
    if (hits.length && input.value.trim() === shown && shown !== '') {
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
    }
  });

  // `/` anywhere outside a text field focuses the search box.
  document.addEventListener('keydown', (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || typing(e) || document.querySelector('dialog[open]')) return;
    e.preventDefault();
    input.focus();
    input.select();
  });

  // Results from an older head would mislead: search again after a commit.
  app.addEventListener('data', () => {
    if (shown && !list.hidden) void run(shown, performance.now());
  });
}
