// The editor: the note's frontmatter as a form (type, title, description, status), with the
// raw YAML one click away, and its Markdown body in CodeMirror (src/views/codemirror.ts),
// beside a live preview (write, split or preview). `[[` completes note titles and ids; a
// broken link in the preview creates the note it names. A frontmatter that does not parse
// shows as raw YAML with the parser's error; the note can still be saved.
//
// Every save names the version it replaces (the source hash read when editing began, or none
// for a new note). When the note changed meanwhile (another tab, an import), the engine
// refuses the save and the editor shows both versions: keep yours, take theirs, or merge the
// two; it never overwrites silently. The compiler's diagnostics follow each save. The stored
// bytes are exactly what was typed: the form rewrites only the lines of the fields it
// changes, and a note written with CRLF line breaks keeps them.

import type { EditorView } from '@codemirror/view';
import type { App } from '../app.js';
import type { SourceText, WriteResult } from 'langonrock';
import { h, fill } from '../lib/dom.js';
import { FIELDS, readFields, setField, split, type Field } from '../lib/frontmatter.js';
import { merge } from '../lib/diff.js';
import { diffBlock } from './diffview.js';
import { sanitized } from '../lib/sanitize.js';
import { explain } from '../lib/messages.js';
import { routes, setTitle, announce, confirmDialog, showError, replaceRoute, noteName } from '../ui.js';
import { SHORTCUTS, type Command } from '../palette.js';
import { diagnosticsList } from './concept.js';
import { createEditor, setText } from './codemirror.js';
import { currentChanged, type View } from './view.js';

export interface EditorParams {
  bundle?: string;
  path?: string;
  /** A new note, with what the route asked for (a broken link's target, a title). */
  fresh?: { bundle?: string; path?: string; title?: string };
}

type Mode = 'write' | 'split' | 'preview';
const MODE_KEY = 'langonrock-notes:editor-mode';
const TEMPLATE_HEAD = '---\ntype: note\n---\n';
const PREVIEW_LIMIT = 100_000;
/** Above this many characters the preview follows the text only when asked. */
const LIVE_PREVIEW_MAX = 500_000;

const LABELS: Record<Field, string> = { type: 'Type', title: 'Title', description: 'Description', status: 'Status' };

function slugPath(title: string): string {
  const s = title
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return `${s || 'untitled'}.md`;
}

const onlyCrlf = (s: string) => /\r\n/.test(s) && !/(^|[^\r])\n/.test(s);

export function editorView(app: App, main: HTMLElement, params: EditorParams): View {
  let isNew = params.bundle === undefined;
  let bundle = params.bundle ?? '';
  let path = params.path ?? '';
  let base: SourceText | null = null;
  let saving = false;
  let pathTouched = !!params.fresh?.path;
  let disposed = false;
  let mode: Mode = (localStorage.getItem(MODE_KEY) as Mode | null) ?? 'split';
  if (!['write', 'split', 'preview'].includes(mode)) mode = 'split';

  // The text is head + body: the head is the BOM and the frontmatter block as written (empty
  // when there is none), the body is in CodeMirror.
  let head = '';
  let headCrlf = false;
  let bodyCrlf = false;
  let editor: EditorView | null = null;
  let yamlMode = false;
  /** The YAML text area holds edits not yet taken into the head. */
  let yamlEdited = false;

  const notices = h('div', { class: 'notices' });
  const conflictArea = h('div', { class: 'conflict-area' });
  const diagArea = h('div', { class: 'diag-area', 'aria-live': 'polite' });
  const inputs = {} as Record<Field, HTMLInputElement | HTMLTextAreaElement>;
  for (const f of FIELDS) {
    inputs[f] =
      f === 'description'
        ? h('textarea', { id: `field-${f}`, name: f, rows: 2, class: 'description-input' })
        : h('input', { id: `field-${f}`, name: f, type: 'text', autocomplete: 'off', list: f === 'status' ? 'statuses' : f === 'type' ? 'types' : null });
  }
  const bundleInput = h('input', { id: 'field-bundle', name: 'bundle', type: 'text', list: 'bundles', required: true, autocomplete: 'off' });
  const pathInput = h('input', { id: 'field-path', name: 'path', type: 'text', required: true, autocomplete: 'off', 'aria-describedby': 'path-help' });
  const yamlArea = h('textarea', { id: 'yaml', class: 'yaml', spellcheck: 'false', 'aria-describedby': 'yaml-help', rows: 6 });
  const yamlProblem = h('p', { class: 'banner warn', id: 'yaml-problem', role: 'status', hidden: true });
  const yamlToggle = h('button', { type: 'button', id: 'yaml-toggle', 'aria-pressed': 'false' }, 'Edit the raw YAML');
  const formPart = h(
    'div',
    { class: 'fields', id: 'frontmatter-form' },
    FIELDS.map((f) => h('div', { class: 'field' }, h('label', { for: `field-${f}` }, LABELS[f]), inputs[f])),
  );
  const yamlPart = h(
    'div',
    { class: 'field', id: 'yaml-part', hidden: true },
    h('label', { for: 'yaml' }, 'Frontmatter YAML (between the --- lines)'),
    yamlArea,
    h('small', { id: 'yaml-help', class: 'muted' }, 'Saved exactly as written. Clear it to save the note without frontmatter.'),
  );
  const writePane = h('div', { class: 'write-pane' });
  const previewBody = h('div', { class: 'rendered', 'aria-live': 'off' });
  const previewNote = h('p', { class: 'muted', hidden: true });
  const previewUpdate = h('button', { type: 'button', hidden: true }, 'Update the preview');
  const previewPane = h('section', { class: 'preview-pane', 'aria-label': 'Preview', tabindex: '-1' }, previewNote, previewUpdate, previewBody);
  const panes = h('div', { class: 'panes', 'data-mode': mode }, writePane, previewPane);
  const modeButtons = (['write', 'split', 'preview'] as Mode[]).map((m) =>
    h('button', { type: 'button', 'aria-pressed': String(m === mode), 'data-mode': m, onclick: () => setMode(m) }, m === 'write' ? 'Write' : m === 'split' ? 'Split' : 'Preview'),
  );
  const saveButton = h('button', { type: 'submit', class: 'primary', 'aria-keyshortcuts': 'Control+S', id: 'save' }, 'Save');
  const deleteButton = h('button', { type: 'button', class: 'danger', id: 'delete' }, 'Delete');
  const historyLink = h('a', { class: 'button', id: 'note-history' }, 'History');
  const closeButton = h('button', { type: 'button' }, 'Close');
  const heading = h('h1', { id: 'editor-h' }, '');
  const bundlesList = h('datalist', { id: 'bundles' }, app.bundles.map((b) => h('option', { value: b })));

  const body = () => editor?.state.doc.toString() ?? '';
  const stored = () => head + body();
  // Nothing to lose until the text is in (`load` makes the editor): leaving an editor that is
  // still reading its note asks nothing.
  const dirty = () => editor !== null && (base ? stored() !== base.content : body().trim() !== '' || head !== TEMPLATE_HEAD);

  const setMode = (m: Mode) => {
    // The pane a mode hides takes the focus with it: the focus moves to the pane left showing,
    // so the keyboard stays in the editor (and Ctrl+Shift+E keeps cycling).
    const active = document.activeElement;
    const fromWrite = active instanceof Node && writePane.contains(active);
    const fromPreview = active instanceof Node && previewPane.contains(active);
    mode = m;
    panes.dataset.mode = m;
    if (m === 'preview' && fromWrite) previewPane.focus();
    else if (m !== 'preview' && fromPreview) editor?.focus();
    for (const b of modeButtons) b.setAttribute('aria-pressed', String(b.dataset.mode === m));
    try {
      localStorage.setItem(MODE_KEY, m);
    } catch {
      // A preference only.
    }
    if (m !== 'write') schedulePreview(true);
  };
  const cycleMode = () => setMode(mode === 'write' ? 'split' : mode === 'split' ? 'preview' : 'write');

  /** The head's YAML and fences, and whether it parses for the form. */
  const syncForm = () => {
    const s = split(head);
    const r = readFields(head);
    const problem = r.problem;
    yamlProblem.hidden = !problem;
    yamlProblem.textContent = problem ? `The form cannot show this frontmatter: ${problem}. Edit the YAML below; the note can still be saved as it is.` : '';
    if (problem && !yamlMode) showYaml(true, false);
    for (const f of FIELDS) {
      inputs[f].disabled = !!problem;
      if (document.activeElement !== inputs[f]) inputs[f].value = r.fields[f];
    }
    if (document.activeElement !== yamlArea && !yamlEdited) yamlArea.value = s.has ? s.yaml.replace(/\r\n/g, '\n').replace(/\n$/, '') : '';
  };

  const showYaml = (on: boolean, focus = true) => {
    yamlMode = on;
    yamlToggle.setAttribute('aria-pressed', String(on));
    yamlToggle.textContent = on ? 'Back to the form' : 'Edit the raw YAML';
    yamlPart.hidden = !on;
    formPart.hidden = on;
    if (on && focus) yamlArea.focus();
  };

  /** The head from the YAML text area: the fences kept as written, or new ones. */
  const headFromYaml = () => {
    if (!yamlEdited) return;
    yamlEdited = false;
    const s = split(head);
    const eol = headCrlf ? '\r\n' : '\n';
    const yaml = yamlArea.value;
    if (yaml.trim() === '' && !s.has) return;
    if (yaml === '' && s.has) {
      // An empty text area removes the block (compile.md §2: no frontmatter).
      head = s.bom;
      return;
    }
    // The text area shows the YAML without its last line break; it comes back here.
    const inner = `${yaml}\n`.replace(/\n/g, eol);
    head = s.bom + (s.has ? s.open : `---${eol}`) + inner + (s.has && s.close ? s.close : `---${eol}`);
  };

  const setHeading = () => {
    const fields = readFields(head).fields;
    const name = fields.title || path || 'New note';
    heading.textContent = isNew ? 'New note' : `Editing “${name}”`;
    setTitle(isNew ? 'New note' : `Edit ${name}`);
    bundleInput.disabled = !isNew;
    pathInput.disabled = !isNew;
    deleteButton.hidden = isNew;
    historyLink.hidden = isNew;
    if (!isNew) historyLink.setAttribute('href', routes.noteHistory(bundle, path));
    currentChanged();
  };

  // --------------------------------------------------------------- preview

  let previewTimer: number | undefined;
  let previewSeq = 0;
  const renderPreview = async () => {
    if (mode === 'write' || !editor) return;
    const my = ++previewSeq;
    const p = await app.call('preview', bundleInput.value.trim() || bundle || 'notes', pathInput.value.trim() || path || 'untitled.md', stored(), PREVIEW_LIMIT);
    if (my !== previewSeq || disposed) return;
    fill(previewBody, sanitized(p.html));
    previewNote.hidden = p.renderedTo >= p.length;
    previewNote.textContent = `The preview shows the first ${p.renderedTo.toLocaleString('en-US')} of ${p.length.toLocaleString('en-US')} characters.`;
  };
  const schedulePreview = (now = false) => {
    clearTimeout(previewTimer);
    const big = (editor?.state.doc.length ?? 0) > LIVE_PREVIEW_MAX;
    previewUpdate.hidden = !big;
    if (big && !now) return;
    previewTimer = window.setTimeout(() => void renderPreview().catch((e) => showError(e, 'show the preview')), now ? 0 : 250);
  };
  previewUpdate.addEventListener('click', () => schedulePreview(true));
  // A broken link in the preview creates its note; other links open as in the note view.
  previewBody.addEventListener('click', (e) => {
    const a = (e.target as HTMLElement).closest('a');
    if (!a) return;
    const href = a.getAttribute('href');
    if (!href || !href.startsWith('#')) return;
    e.preventDefault();
    location.hash = href;
  });

  // --------------------------------------------------------------- saving

  const elsewhereNotice = async () => {
    if (isNew || !base || saving) return;
    const now = await app.call('entry', bundle, path);
    if (disposed || saving || !base) return;
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

  const showDiagnostics = (list: { message: string }[]) => fill(diagArea, diagnosticsList(list, 'Diagnostics from this save'));

  const write = async (content: string, replaces: string | undefined) => {
    saving = true;
    saveButton.disabled = true;
    const started = performance.now();
    try {
      const result: WriteResult = await app.call('write', bundle, path, content, replaces);
      window.__notesPerf.marks.lastSaveMs = performance.now() - started;
      base = { content, hash: result.hash };
      if (isNew) {
        isNew = false;
        replaceRoute(routes.edit(bundle, path));
      }
      setHeading();
      fill(conflictArea);
      notices.querySelector('.elsewhere')?.remove();
      showDiagnostics(result.diagnostics);
      const renamed = result.renamed.length ? ` Renamed: ${result.renamed.map((r) => `${r.from} → ${r.to}`).join(', ')}.` : '';
      announce(`Saved ${bundle}/${path}.${renamed}`);
      fill(
        notices,
        h(
          'p',
          { class: 'banner saved', role: 'status' },
          `Saved ${bundle}/${path}`,
          result.id ? [' as ', h('a', { href: routes.concept(result.id) }, readFields(head).fields.title || result.id)] : ' (a navigation document)',
          `.${renamed}`,
        ),
      );
    } catch (e) {
      if ((e as { code?: string }).code === 'CONFLICT') await conflict(content, (e as { reason?: string }).reason);
      else {
        const { message, detail } = explain(e, 'save the note');
        fill(notices, h('div', { class: 'banner error save-failed', role: 'alert' }, message, detail ? h('details', null, h('summary', null, 'Details'), h('code', null, detail)) : null));
      }
    } finally {
      saving = false;
      saveButton.disabled = false;
    }
  };

  const save = async () => {
    if (saving) return;
    if (yamlMode) headFromYaml();
    if (isNew) {
      bundle = bundleInput.value.trim();
      path = pathInput.value.trim().normalize('NFC');
      if (!bundle || !path) {
        showError(new Error('a new note needs a bundle and a file name'), 'save the note');
        return;
      }
      if (!/\.md$/i.test(path)) path += '.md';
      pathInput.value = path;
    }
    await write(stored(), base?.hash);
  };

  const compare = async () => {
    if (yamlMode) headFromYaml();
    await conflict(stored(), 'changed');
  };

  /** From here on the editor edits `theirs`: a new note whose path was taken becomes an edit. */
  const adopt = (theirs: SourceText) => {
    base = theirs;
    if (isNew) {
      isNew = false;
      replaceRoute(routes.edit(bundle, path));
    }
    setHeading();
  };

  /** Both versions side by side, and the three ways out. */
  const conflict = async (mine: string, reason: string | undefined) => {
    let theirs: SourceText | null;
    try {
      theirs = await app.call('readSource', bundle, path);
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
        load(theirs.content);
        announce('Took the other version.');
      } else {
        base = null;
        location.hash = '#/';
      }
    });
    const mergeButton = h('button', { type: 'button' }, 'Merge both');
    mergeButton.addEventListener('click', () => {
      const m = merge(base?.content ?? '', mine, theirs!.content);
      adopt(theirs!);
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
      editor?.focus();
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
    if (!(await confirmDialog(`Delete ${bundle}/${path}? Its history keeps it, so it can be restored.`, 'Delete', true))) return;
    try {
      await app.call('remove', bundle, path, base.hash);
      base = null;
      announce(`Deleted ${bundle}/${path}`);
      location.hash = '#/';
    } catch (e) {
      showError(e, 'delete the note');
      if ((e as { code?: string }).code === 'CONFLICT') await conflict(stored(), (e as { reason?: string }).reason);
    }
  };

  // --------------------------------------------------------------- loading

  /** Puts a whole text in the editor: the head in the form, the body in CodeMirror. */
  const load = (text: string) => {
    const s = split(text);
    head = s.bom + s.open + s.yaml + s.close;
    headCrlf = s.open.endsWith('\r\n');
    const crlf = onlyCrlf(s.body);
    if (!editor || crlf !== bodyCrlf) {
      bodyCrlf = crlf;
      editor?.destroy();
      fill(writePane);
      editor = createEditor(writePane, s.body, crlf, {
        complete: (q) => (q === '' ? app.call('refs', app.recent().slice(0, 12)) : app.call('switcher', q, 30)),
        changed: () => schedulePreview(),
      });
    } else setText(editor, s.body);
    syncForm();
    setHeading();
    schedulePreview(true);
  };

  for (const f of FIELDS) {
    inputs[f].addEventListener('input', () => {
      try {
        head = setField(head, f, inputs[f].value);
        if (!headCrlf) headCrlf = split(head).open.endsWith('\r\n');
      } catch (e) {
        yamlProblem.hidden = false;
        yamlProblem.textContent = explain(e).message;
      }
      if (f === 'title' && isNew && !pathTouched) pathInput.value = slugPath(inputs.title.value);
      if (f === 'title') setHeading();
      syncYamlArea();
      schedulePreview();
    });
  }
  const syncYamlArea = () => {
    yamlEdited = false;
    const s = split(head);
    yamlArea.value = s.has ? s.yaml.replace(/\r\n/g, '\n').replace(/\n$/, '') : '';
  };
  let yamlTimer: number | undefined;
  yamlArea.addEventListener('input', () => {
    yamlEdited = true;
    clearTimeout(yamlTimer);
    yamlTimer = window.setTimeout(() => {
      headFromYaml();
      syncForm();
      schedulePreview();
    }, 150);
  });
  yamlToggle.addEventListener('click', () => {
    if (yamlMode) {
      headFromYaml();
      if (readFields(head).problem) {
        yamlArea.focus();
        return;
      }
      showYaml(false);
      syncForm();
      inputs.title.focus();
    } else {
      syncYamlArea();
      showYaml(true);
    }
  });
  pathInput.addEventListener('input', () => (pathTouched = true));
  closeButton.addEventListener('click', async () => {
    if (isNew) {
      location.hash = '#/';
      return;
    }
    const e = await app.call('entry', bundle, path);
    location.hash = e?.id ? routes.concept(e.id) : e ? routes.document(bundle, path) : '#/';
  });
  deleteButton.addEventListener('click', () => void remove());

  const help = h(
    'p',
    { id: 'editor-help', class: 'shortcuts-help' },
    'Markdown. ',
    h('kbd', null, '[['),
    ' links a note (type its title); ',
    h('kbd', null, 'Ctrl+S'),
    ' saves; ',
    h('kbd', null, 'Ctrl+Shift+E'),
    ' switches write, split and preview; ',
    h('kbd', null, 'Ctrl+B'),
    ' bold, ',
    h('kbd', null, 'Ctrl+I'),
    ' italic, ',
    h('kbd', null, 'Ctrl+F'),
    ' find; Tab leaves the editor. ',
    h('button', { type: 'button', class: 'linklike', onclick: () => document.getElementById('shortcuts-button')?.click() }, `All ${SHORTCUTS.length} shortcuts`),
  );

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
        if ((e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 's') {
          e.preventDefault();
          void save();
        } else if ((e.ctrlKey || e.metaKey) && e.shiftKey && e.key.toLowerCase() === 'e') {
          e.preventDefault();
          cycleMode();
        }
      },
    },
    h(
      'div',
      { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: 'field-bundle' }, 'Bundle'), bundleInput),
      h('div', { class: 'field' }, h('label', { for: 'field-path' }, 'File'), pathInput, h('small', { id: 'path-help', class: 'muted' }, 'A path in the bundle, ending in .md')),
    ),
    h('fieldset', { class: 'frontmatter' }, h('legend', null, 'Frontmatter'), yamlProblem, formPart, yamlPart, h('div', { class: 'toolbar' }, yamlToggle)),
    h('div', { class: 'toolbar' }, h('div', { class: 'editor-modes', role: 'group', 'aria-label': 'View' }, modeButtons), help),
    panes,
    h('div', { class: 'toolbar' }, saveButton, closeButton, historyLink, deleteButton),
    h('datalist', { id: 'statuses' }, ['current', 'draft', 'deprecated', 'stable'].map((s) => h('option', { value: s }))),
    h('datalist', { id: 'types' }, ['note', 'concept', 'runbook', 'decision', 'table'].map((s) => h('option', { value: s }))),
    bundlesList,
  );

  fill(main, h('div', { class: 'editor-view' }, heading, notices, diagArea, conflictArea, form));

  const start = async () => {
    if (isNew) {
      const fresh = params.fresh ?? {};
      bundleInput.value = fresh.bundle ?? app.bundles[0] ?? 'notes';
      let text = TEMPLATE_HEAD + '\n';
      if (fresh.title) text = setField(text, 'title', fresh.title);
      pathInput.value = fresh.path ?? (fresh.title ? slugPath(fresh.title) : 'untitled.md');
      load(text);
      (fresh.title ? editor! : inputs.title).focus();
      return;
    }
    bundleInput.value = bundle;
    pathInput.value = path;
    const [source, diags] = await Promise.all([app.call('readSource', bundle, path), app.call('diagnosticsOf', bundle, path)]);
    if (disposed) return;
    if (!source) {
      fill(main, h('h1', null, 'No such document'), h('p', null, `${bundle}/${path} does not exist (any more).`));
      return;
    }
    base = source;
    // The diagnostics first, so that nothing moves under the cursor once the text is in.
    if (diags) showDiagnostics(diags);
    load(source.content);
    editor?.focus();
  };
  void start().catch((e) => showError(e, 'open the editor'));

  const unload = (e: BeforeUnloadEvent) => {
    if (dirty()) e.preventDefault();
  };
  window.addEventListener('beforeunload', unload);

  return {
    refresh: () => void elsewhereNotice().catch((e) => showError(e, 'check the note')),
    dirty,
    dispose: () => {
      disposed = true;
      clearTimeout(previewTimer);
      editor?.destroy();
      window.removeEventListener('beforeunload', unload);
    },
    current: () => {
      const commands: Command[] = [
        { label: 'Save', keys: 'Ctrl+S', run: () => void save() },
        { label: 'Editor: write only', run: () => setMode('write') },
        { label: 'Editor: split view', run: () => setMode('split') },
        { label: 'Editor: preview only', run: () => setMode('preview') },
        { label: yamlMode ? 'Edit the frontmatter with the form' : 'Edit the raw YAML', run: () => yamlToggle.click() },
      ];
      return isNew ? { editing: true, commands } : { bundle, path, editing: true, commands: [...commands, { label: `History of “${noteName({ id: path, title: readFields(head).fields.title || null })}”`, run: () => (location.hash = routes.noteHistory(bundle, path)) }] };
    },
  };
}
