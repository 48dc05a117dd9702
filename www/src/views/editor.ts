// The editor: the whole stored text (Markdown with frontmatter) in a text area, and a small
// form for type, title, description and status that rewrites the frontmatter. Every save
// names the version it replaces (the source hash read when editing began, or none for a new
// note). When the note changed meanwhile (another tab, an import), the save is refused by the
// engine and the editor shows both versions: keep yours, take theirs, or merge the two; it
// never overwrites silently. The compiler's diagnostics for the note follow each save.

import type { App } from '../app.js';
import { describe } from '../app.js';
import type { LangonrockError, SourceText } from 'langonrock';
import { h, fill } from '../lib/dom.js';
import { FIELDS, readFields, setField, type Field } from '../lib/frontmatter.js';
import { diffLines, merge } from '../lib/diff.js';
import { routes, setTitle, announce, confirmDialog, showError, replaceRoute } from '../ui.js';
import { diagnosticsList } from './concept.js';
import type { View } from './view.js';

export interface EditorParams {
  bundle?: string;
  path?: string;
}

const TEMPLATE = '---\ntype: note\n---\n\n';

const LABELS: Record<Field, string> = { type: 'Type', title: 'Title', description: 'Description', status: 'Status' };

function slugPath(title: string): string {
  const s = title
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return `${s || 'untitled'}.md`;
}

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

export function editorView(app: App, main: HTMLElement, params: EditorParams): View {
  let isNew = params.bundle === undefined;
  let bundle = params.bundle ?? '';
  let path = params.path ?? '';
  let base: SourceText | null = null;
  let crlf = false;
  let saving = false;
  let pathTouched = false;
  let disposed = false;

  const notices = h('div', { class: 'notices' });
  const conflictArea = h('div', { class: 'conflict-area' });
  const diagArea = h('div', { class: 'diag-area', 'aria-live': 'polite' });
  const textarea = h('textarea', { class: 'source', id: 'source', spellcheck: 'false', 'aria-describedby': 'source-help' });
  const inputs = {} as Record<Field, HTMLInputElement>;
  for (const f of FIELDS) inputs[f] = h('input', { id: `field-${f}`, name: f, type: 'text', autocomplete: 'off', list: f === 'status' ? 'statuses' : null });
  const bundleInput = h('input', { id: 'field-bundle', name: 'bundle', type: 'text', list: 'bundles', required: true, autocomplete: 'off' });
  const pathInput = h('input', { id: 'field-path', name: 'path', type: 'text', required: true, autocomplete: 'off', 'aria-describedby': 'path-help' });
  const formProblem = h('p', { class: 'banner warn', hidden: true });
  const saveButton = h('button', { type: 'submit', class: 'primary', 'aria-keyshortcuts': 'Control+S' }, 'Save');
  const deleteButton = h('button', { type: 'button', class: 'danger' }, 'Delete');
  const closeButton = h('button', { type: 'button' }, 'Close');
  const heading = h('h1', null, '');

  const stored = () => (crlf ? textarea.value.replace(/\r?\n/g, '\r\n') : textarea.value);
  const dirty = () => (base ? stored() !== base.content : textarea.value !== TEMPLATE && textarea.value.trim() !== '');

  const syncForm = () => {
    const r = readFields(textarea.value);
    formProblem.hidden = !r.problem;
    formProblem.textContent = r.problem ? `The form is off: ${r.problem}. Edit the text below.` : '';
    for (const f of FIELDS) {
      inputs[f].disabled = !!r.problem;
      if (document.activeElement !== inputs[f]) inputs[f].value = r.fields[f];
    }
  };

  const setHeading = () => {
    heading.textContent = isNew ? 'New note' : `Editing ${bundle} / ${path}`;
    setTitle(isNew ? 'New note' : `Edit ${path}`);
    bundleInput.disabled = !isNew;
    pathInput.disabled = !isNew;
    deleteButton.hidden = isNew;
  };

  const load = (text: string) => {
    textarea.value = text;
    syncForm();
  };

  const elsewhereNotice = () => {
    if (isNew || !base || saving) return;
    const now = app.entry(bundle, path);
    const changed = !now || now.hash !== base.hash;
    const existing = notices.querySelector('.elsewhere');
    if (!changed) {
      existing?.remove();
      return;
    }
    if (existing) return;
    notices.append(
      h(
        'div',
        { class: 'banner warn elsewhere', role: 'status' },
        now ? 'This note changed elsewhere (another tab or an import) since you opened it. ' : 'This note was deleted elsewhere since you opened it. ',
        'Your text is kept; saving will show both versions. ',
        h('button', { type: 'button', onclick: () => void compare() }, 'Compare now'),
      ),
    );
  };

  const showDiagnostics = (list: { message: string }[]) => {
    fill(diagArea, diagnosticsList(list, 'Diagnostics from this save'));
  };

  const write = async (content: string, replaces: string | undefined) => {
    saving = true;
    saveButton.disabled = true;
    try {
      const result = await app.conn.write(bundle, path, content, replaces);
      base = { content, hash: result.hash };
      if (isNew) {
        isNew = false;
        replaceRoute(routes.edit(bundle, path));
        setHeading();
      }
      fill(conflictArea);
      notices.querySelector('.elsewhere')?.remove();
      app.noteDiagnostics(bundle, path, result.diagnostics);
      showDiagnostics(result.diagnostics);
      const renamed = result.renamed.length ? ` Renamed: ${result.renamed.map((r) => `${r.from} → ${r.to}`).join(', ')}.` : '';
      announce(`Saved ${bundle}/${path}.${renamed}`);
      fill(notices, h('p', { class: 'banner saved', role: 'status' }, `Saved ${bundle}/${path}`, result.id ? [' as ', h('a', { href: routes.concept(result.id) }, result.id)] : ' (a navigation document)', `.${renamed}`));
      await app.refresh();
    } catch (e) {
      if ((e as LangonrockError).code === 'CONFLICT') await conflict(content, (e as LangonrockError).reason);
      else showError(e, 'save');
    } finally {
      saving = false;
      saveButton.disabled = false;
    }
  };

  const save = async () => {
    if (isNew) {
      bundle = bundleInput.value.trim();
      path = pathInput.value.trim().normalize('NFC');
      if (!bundle || !path) {
        showError(new Error('a new note needs a bundle and a file name'), 'save');
        return;
      }
      if (!/\.md$/i.test(path)) path += '.md';
      pathInput.value = path;
    }
    await write(stored(), base?.hash);
  };

  const compare = async () => {
    await conflict(stored(), 'changed');
  };

  /** From here on the editor edits `theirs`: a new note whose path was taken becomes an edit. */
  const adopt = (theirs: SourceText) => {
    base = theirs;
    if (isNew) {
      isNew = false;
      replaceRoute(routes.edit(bundle, path));
      setHeading();
    }
  };

  /** Both versions side by side, and the three ways out. */
  const conflict = async (mine: string, reason: string | undefined) => {
    let theirs: SourceText | null;
    try {
      theirs = await app.conn.readSource(bundle, path);
    } catch (e) {
      showError(e, 'read the other version');
      return;
    }
    if (disposed) return;
    notices.querySelector('.elsewhere')?.remove();
    const why =
      theirs === null
        ? 'This note was deleted elsewhere while you edited it.'
        : reason === 'exists' && !base
          ? `A note already exists at ${bundle}/${path}.`
          : 'This note was changed elsewhere (another tab or an import) while you edited it.';
    const keepMine = h('button', { type: 'button', class: 'primary' }, theirs ? 'Keep mine' : 'Save mine again');
    keepMine.addEventListener('click', () => void write(mine, theirs?.hash));
    const takeTheirs = h('button', { type: 'button' }, theirs ? 'Take theirs' : 'Discard mine');
    takeTheirs.addEventListener('click', async () => {
      if (!(await confirmDialog(theirs ? 'Replace your text in the editor with the other version? Your edits are dropped.' : 'Drop your text? The note stays deleted.', theirs ? 'Take theirs' : 'Discard mine', true))) return;
      fill(conflictArea);
      if (theirs) {
        adopt(theirs);
        crlf = /\r\n/.test(theirs.content) && !/(^|[^\r])\n/.test(theirs.content);
        load(theirs.content);
        announce('Took the other version.');
      } else {
        location.hash = '#/';
      }
    });
    const mergeButton = h('button', { type: 'button' }, 'Merge both');
    mergeButton.addEventListener('click', () => {
      const m = merge(base?.content ?? '', mine, theirs!.content);
      adopt(theirs!);
      crlf = false;
      load(m.text);
      fill(
        conflictArea,
        h(
          'p',
          { class: 'banner warn', role: 'status' },
          m.conflicts === 0
            ? 'Merged: both versions’ changes are in the text below. Review it and save.'
            : `Merged with ${m.conflicts} region${m.conflicts === 1 ? '' : 's'} both sides changed, kept between <<<<<<< yours and >>>>>>> theirs. Edit them, then save.`,
        ),
      );
      textarea.focus();
      announce('Merged both versions into the editor.');
    });
    fill(
      conflictArea,
      h(
        'section',
        { class: 'banner error conflict', 'aria-labelledby': 'conflict-h' },
        h('h2', { id: 'conflict-h' }, 'Two versions of this note'),
        h('p', null, why, ' Nothing was overwritten. Choose what to keep:'),
        h(
          'div',
          { class: 'versions' },
          h('div', null, h('h3', null, 'Yours (not saved)'), h('pre', { class: 'mine', tabindex: '0' }, mine)),
          h('div', null, h('h3', null, theirs ? `Theirs (saved, ${theirs.hash.slice(0, 12)})` : 'Theirs'), h('pre', { class: 'theirs', tabindex: '0' }, theirs ? theirs.content : '(deleted)')),
        ),
        theirs ? [h('h3', null, 'From theirs to yours'), diffBlock(theirs.content, mine, 'Differences from theirs to yours')] : null,
        h('div', { class: 'toolbar' }, theirs ? mergeButton : null, keepMine, takeTheirs),
      ),
    );
    conflictArea.scrollIntoView({ block: 'start' });
    (theirs ? mergeButton : keepMine).focus({ preventScroll: true });
    announce('This note changed elsewhere: both versions are shown.');
  };

  const remove = async () => {
    if (!base) return;
    if (!(await confirmDialog(`Delete ${bundle}/${path}? Its history keeps it, so a restore can bring it back.`, 'Delete', true))) return;
    try {
      await app.conn.delete(bundle, path, base.hash);
      base = null;
      announce(`Deleted ${bundle}/${path}`);
      await app.refresh();
      location.hash = '#/';
    } catch (e) {
      showError(e, 'delete');
      if ((e as LangonrockError).code === 'CONFLICT') await conflict(stored(), (e as LangonrockError).reason);
    }
  };

  for (const f of FIELDS) {
    inputs[f].addEventListener('input', () => {
      try {
        const at = textarea.selectionStart;
        textarea.value = setField(textarea.value, f, inputs[f].value);
        textarea.selectionStart = textarea.selectionEnd = at;
      } catch (e) {
        formProblem.hidden = false;
        formProblem.textContent = describe(e);
      }
      if (f === 'title' && isNew && !pathTouched) pathInput.value = slugPath(inputs.title.value);
    });
  }
  pathInput.addEventListener('input', () => (pathTouched = true));
  let syncTimer: number | undefined;
  textarea.addEventListener('input', () => {
    clearTimeout(syncTimer);
    syncTimer = window.setTimeout(syncForm, 120);
  });
  closeButton.addEventListener('click', () => {
    location.hash = isNew ? '#/' : (() => {
      const e = app.entry(bundle, path);
      return e?.id ? routes.concept(e.id) : e ? routes.document(bundle, path) : '#/';
    })();
  });
  deleteButton.addEventListener('click', () => void remove());

  const form = h(
    'form',
    {
      class: 'editor',
      'aria-labelledby': 'editor-h',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void save();
      },
      onkeydown: (e: KeyboardEvent) => {
        if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
          e.preventDefault();
          void save();
        }
      },
    },
    h(
      'div',
      { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: 'field-bundle' }, 'Bundle'), bundleInput),
      h('div', { class: 'field' }, h('label', { for: 'field-path' }, 'File'), pathInput, h('small', { id: 'path-help', class: 'muted' }, 'A path in the bundle, ending in .md')),
    ),
    h(
      'div',
      { class: 'fields' },
      FIELDS.map((f) => h('div', { class: 'field' }, h('label', { for: `field-${f}` }, LABELS[f]), inputs[f])),
    ),
    formProblem,
    h('div', { class: 'field' }, h('label', { for: 'source' }, 'Markdown, with its frontmatter'), textarea, h('small', { id: 'source-help', class: 'muted' }, 'Link other notes with [[id]] or [text](path.md). Ctrl+S saves.')),
    h('div', { class: 'toolbar' }, saveButton, closeButton, deleteButton),
    h('datalist', { id: 'statuses' }, ['current', 'draft', 'deprecated', 'stable'].map((s) => h('option', { value: s }))),
    h('datalist', { id: 'bundles' }, app.bundles.map((b) => h('option', { value: b }))),
  );

  heading.id = 'editor-h';
  fill(main, h('div', { class: 'editor-view' }, heading, notices, diagArea, conflictArea, form));
  setHeading();

  const start = async () => {
    if (isNew) {
      bundleInput.value = app.bundles[0] ?? 'notes';
      pathInput.value = 'untitled.md';
      load(TEMPLATE);
      inputs.title.focus();
      return;
    }
    bundleInput.value = bundle;
    pathInput.value = path;
    const source = await app.conn.readSource(bundle, path);
    if (disposed) return;
    if (!source) {
      fill(main, h('h1', null, 'No such document'), h('p', null, `${bundle}/${path} does not exist (any more).`));
      return;
    }
    base = source;
    crlf = /\r\n/.test(source.content) && !/(^|[^\r])\n/.test(source.content);
    load(source.content);
    const diags = app.diagnosticsOf(bundle, path);
    if (diags) showDiagnostics(diags);
    textarea.focus();
    textarea.setSelectionRange(0, 0);
  };
  void start().catch((e) => showError(e, 'open editor'));

  const unload = (e: BeforeUnloadEvent) => {
    if (dirty()) e.preventDefault();
  };
  window.addEventListener('beforeunload', unload);

  return {
    refresh: elsewhereNotice,
    dirty,
    dispose: () => {
      disposed = true;
      window.removeEventListener('beforeunload', unload);
    },
  };
}
