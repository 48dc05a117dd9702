// The quick switcher (Ctrl/Cmd+K: type a title or an id, Enter opens the note; recent notes
// when empty), the command palette (Ctrl/Cmd+Shift+P or F1, or `>` in the switcher) and the
// list of keyboard shortcuts (`?`). The matching runs in the engine worker over every note's
// title and id.

import type { App } from './app.js';
import type { NoteRef } from './engine/types.js';
import { h, fill } from './lib/dom.js';
import { currentTheme, setTheme } from './theme.js';
import { badge, noteName, routes, showError, typing } from './ui.js';

export interface Command {
  label: string;
  /** Shown beside the label, e.g. `Ctrl+S`. */
  keys?: string;
  run(): void;
}

/** What is on screen, for the palette's context commands. */
export interface Current {
  id?: string;
  bundle?: string;
  path?: string;
  editing?: boolean;
  commands?: Command[];
}

const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? 'Cmd' : 'Ctrl';

/** Every keyboard shortcut of the page, for the help dialog and the editor's help line. */
export const SHORTCUTS: Array<[string, string]> = [
  ['/', 'Search the notes'],
  [`${mod}+K`, 'Quick switcher: open a note by its title or id'],
  [`${mod}+Shift+P or F1`, 'Command palette (or type > in the quick switcher)'],
  ['n', 'New note'],
  ['e', 'Edit the note on view'],
  ['h', 'History of the note on view'],
  ['?', 'This list of shortcuts'],
  ['↑ ↓ Home End', 'Move through the list of notes, the results and the switcher'],
  ['Esc', 'Close a list, a dialog or the menu'],
  [`${mod}+S`, 'Editor: save'],
  [`${mod}+Shift+E`, 'Editor: write, split view, preview'],
  [`${mod}+B / ${mod}+I`, 'Editor: bold / italic'],
  ['[[', 'Editor: link a note, completing its title or id'],
  [`${mod}+Space`, 'Editor: complete a link'],
  [`${mod}+F`, 'Editor: find and replace'],
  [`${mod}+Z / ${mod}+Shift+Z`, 'Editor: undo / redo'],
];

export function shortcutsDialog(): void {
  const dialog = h(
    'dialog',
    { 'aria-labelledby': 'shortcuts-h', class: 'shortcuts' },
    h('h2', { id: 'shortcuts-h' }, 'Keyboard shortcuts'),
    h(
      'dl',
      { class: 'shortcut-list' },
      SHORTCUTS.map(([k, what]) => [h('dt', null, k.split(' / ').map((part, i) => [i ? ' / ' : '', h('kbd', null, part)])), h('dd', null, what)]),
    ),
    h('form', { method: 'dialog' }, h('button', { type: 'submit', class: 'primary' }, 'Close')),
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  (dialog.querySelector('button') as HTMLButtonElement).focus();
}

export function setupPalette(app: App, current: () => Current): void {
  const globalCommands = (): Command[] => {
    const c = current();
    const dark = currentTheme() === 'dark';
    return [
      ...(c.commands ?? []),
      { label: 'New note', keys: 'n', run: () => (location.hash = '#/new') },
      { label: 'Search the notes', keys: '/', run: () => (document.getElementById('q') as HTMLInputElement).focus() },
      { label: 'Go to the start page', run: () => (location.hash = '#/') },
      { label: 'Import a folder, or export everything', run: () => (location.hash = '#/transfer') },
      { label: 'History: every revision', run: () => (location.hash = '#/history') },
      { label: 'What an agent sees', run: () => (location.hash = '#/agent') },
      { label: dark ? 'Switch to light mode' : 'Switch to dark mode', run: () => setTheme(dark ? 'light' : 'dark') },
      { label: 'Follow the system’s light or dark mode', run: () => setTheme(null) },
      { label: 'Keyboard shortcuts', keys: '?', run: shortcutsDialog },
    ];
  };

  const openPicker = (commands: boolean) => {
    if (document.querySelector('dialog.picker[open]')) return;
    const back = document.activeElement as HTMLElement | null;
    const input = h('input', {
      type: 'text',
      id: 'picker-input',
      role: 'combobox',
      'aria-expanded': 'true',
      'aria-controls': 'picker-list',
      'aria-autocomplete': 'list',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-label': 'Note title or id, or > and a command',
      placeholder: commands ? '> command' : 'Open a note: type its title or id (> for commands)',
      value: commands ? '> ' : '',
    });
    const list = h('ul', { id: 'picker-list', role: 'listbox', 'aria-label': 'Matches' });
    const hint = h('p', { class: 'hint muted' }, '↑ ↓ to choose, Enter to open, Esc to close.');
    const dialog = h('dialog', { class: 'picker', 'aria-label': commands ? 'Command palette' : 'Quick switcher' }, input, list, hint);
    let items: Array<{ label: Node | string; run: () => void }> = [];
    let active = 0;
    let seq = 0;

    const setActive = (i: number) => {
      active = Math.max(0, Math.min(items.length - 1, i));
      list.querySelectorAll('[role="option"]').forEach((el, j) => el.setAttribute('aria-selected', String(j === active)));
      if (items.length) {
        input.setAttribute('aria-activedescendant', `pick-${active}`);
        document.getElementById(`pick-${active}`)?.scrollIntoView({ block: 'nearest' });
      } else input.removeAttribute('aria-activedescendant');
    };
    const draw = (empty: string) => {
      fill(
        list,
        items.length
          ? items.map((it, i) =>
              h(
                'li',
                {
                  id: `pick-${i}`,
                  role: 'option',
                  'aria-selected': String(i === active),
                  onmousedown: (e: Event) => e.preventDefault(),
                  onclick: () => choose(i),
                },
                it.label,
              ),
            )
          : h('li', { role: 'presentation', class: 'empty' }, empty),
      );
      setActive(0);
    };
    const noteItem = (r: NoteRef) => ({
      label: h('span', { class: 'hit-head' }, h('span', { class: 'hit-title' }, noteName(r)), h('span', { class: 'hit-meta' }, [r.title !== null && r.title !== r.id ? r.id : null, r.bundle].filter(Boolean).join(' · ')), badge(r.status)),
      run: () => (location.hash = routes.concept(r.id)),
    });
    const update = async () => {
      const my = ++seq;
      const text = input.value;
      if (text.startsWith('>')) {
        dialog.setAttribute('aria-label', 'Command palette');
        const q = text.slice(1).trim().toLowerCase();
        items = globalCommands()
          .filter((c) => q.split(/\s+/).every((w) => c.label.toLowerCase().includes(w)))
          .map((c) => ({ label: h('span', { class: 'hit-head' }, h('span', { class: 'hit-title' }, c.label), c.keys ? h('kbd', null, c.keys) : null), run: c.run }));
        draw('No command matches.');
        return;
      }
      dialog.setAttribute('aria-label', 'Quick switcher');
      const q = text.trim();
      try {
        const refs = q === '' ? await app.call('refs', app.recent()) : await app.call('switcher', q, 40);
        if (my !== seq) return;
        items = refs.map(noteItem);
        if (q !== '' && !refs.some((r) => (r.title ?? r.id).toLowerCase() === q.toLowerCase())) {
          items.push({ label: h('span', { class: 'hit-title' }, `Create a note titled “${q}”`), run: () => (location.hash = routes.create({ title: q })) });
        }
        draw(q === '' ? 'Type a title or an id. Notes you open show here.' : 'No note matches.');
      } catch (e) {
        showError(e, 'find notes');
      }
    };
    const choose = (i: number) => {
      const it = items[i];
      if (!it) return;
      dialog.close();
      it.run();
    };
    input.addEventListener('input', () => void update());
    input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown') {
        e.preventDefault();
        setActive(active + 1);
      } else if (e.key === 'ArrowUp') {
        e.preventDefault();
        setActive(active - 1);
      } else if (e.key === 'Home' && e.ctrlKey) setActive(0);
      else if (e.key === 'End' && e.ctrlKey) setActive(items.length - 1);
      else if (e.key === 'Enter') {
        e.preventDefault();
        choose(active);
      }
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (back && document.contains(back)) back.focus({ preventScroll: true });
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
    void update();
  };

  document.getElementById('palette-button')!.addEventListener('click', () => openPicker(true));
  document.getElementById('shortcuts-button')!.addEventListener('click', shortcutsDialog);

  document.addEventListener('keydown', (e) => {
    const meta = e.ctrlKey || e.metaKey;
    if (meta && !e.shiftKey && !e.altKey && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      openPicker(false);
      return;
    }
    if ((meta && e.shiftKey && e.key.toLowerCase() === 'p') || e.key === 'F1') {
      e.preventDefault();
      openPicker(true);
      return;
    }
    if (meta || e.altKey || typing(e) || document.querySelector('dialog[open]')) return;
    if (e.key === '?') {
      e.preventDefault();
      shortcutsDialog();
    } else if (e.key === 'n') {
      e.preventDefault();
      location.hash = '#/new';
    } else if (e.key === 'h') {
      const c = current();
      if (c.bundle && c.path) {
        e.preventDefault();
        location.hash = routes.noteHistory(c.bundle, c.path);
      }
    }
  });
}
