// Import and export. A folder (picked or dropped) is read as the command line reads one: each
// folder in it is a bundle, or the whole folder one bundle; it is imported as ONE revision
// (the engine's import, src/engine/importer.ts), with progress and Cancel (nothing committed
// on cancel). Loose Markdown files go into one bundle in one revision too. Before anything
// is committed the page shows the plan: what is new, what is already stored, what differs,
// what an earlier import of the folder brought that is gone now, and every file whose name
// the notes cannot take (none is imported unless the person skips them). Export zips every
// stored document, exact bytes, as `<bundle>/<path>`.

import type { App } from '../app.js';
import type { ImportOptions, ImportOutcome, ImportPlan, ImportProgress } from '../engine/types.js';
import { h, fill } from '../lib/dom.js';
import { routes, setTitle, announce, showError, plural } from '../ui.js';
import type { View } from './view.js';

interface Picked {
  /**
   * The path inside the chosen folder (its own name left out), `/`-separated; absent for a
   * picked folder's files, whose paths are read as they are handed over (`relativePath`).
   */
  rel?: string;
  file: File;
}

/**
 * The hand-over's slices: each holds this thread for about this many milliseconds, its
 * number of files set from the time the last slice took per file (the first one is small).
 */
const SLICE_MS = 8;
const FIRST_SLICE = 32;
const MOST_PER_SLICE = 4000;

/** A picked folder's file's path inside the folder. */
const relativePath = (file: File) => file.webkitRelativePath.slice(file.webkitRelativePath.indexOf('/') + 1);

interface Choice {
  files: Picked[];
  /**
   * A picked folder's files as the input holds them, not yet copied into `files`: the first
   * hand-over copies them a slice at a time (copying 20,000 at once in the input's event
   * holds the page for a long task), then calls `drained` (which clears the input).
   */
  pending?: FileList;
  drained?: () => void;
  folder: string;
  loose: boolean;
}

let nextJob = 1;

/** Walks a dropped directory entry. */
async function walk(entry: FileSystemEntry, prefix: string, out: Picked[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    out.push({ rel: prefix + entry.name, file });
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      for (const child of batch) await walk(child, `${prefix}${entry.name}/`, out);
    }
  }
}

/** The files of a drop: one folder is taken as the chosen folder, several as its bundles. */
async function dropped(data: DataTransfer): Promise<Choice> {
  const entries = [...data.items].map((i) => i.webkitGetAsEntry?.() ?? null).filter((e): e is FileSystemEntry => e !== null);
  // Files put on the drag by a page rather than a file manager have no entries: loose files.
  if (entries.length === 0) return { files: [...data.files].map((file) => ({ rel: file.name, file })), folder: 'files', loose: true };
  const out: Picked[] = [];
  const dirs = entries.filter((e) => e.isDirectory);
  if (dirs.length === 1 && entries.length === 1) {
    await walk(dirs[0], '', out);
    return { files: out.map((p) => ({ ...p, rel: p.rel!.slice(dirs[0].name.length + 1) })), folder: dirs[0].name, loose: false };
  }
  for (const e of entries) await walk(e, '', out);
  return { files: out, folder: 'dropped', loose: out.every((p) => !p.rel!.includes('/')) };
}

export function transferView(app: App, main: HTMLElement): View {
  setTitle('Import & export');
  const folderInput = h('input', { type: 'file', id: 'folder-input', multiple: true, webkitdirectory: true, hidden: true, 'aria-label': 'Folder to import' });
  const filesInput = h('input', { type: 'file', id: 'files-input', multiple: true, accept: '.md,text/markdown', hidden: true, 'aria-label': 'Markdown files to import' });
  const oneBundle = h('input', { type: 'checkbox', id: 'one-bundle' });
  const bundleName = h('input', { type: 'text', id: 'bundle-name', value: 'notes', autocomplete: 'off', 'aria-describedby': 'bundle-name-help' });
  const planArea = h('div', { class: 'plan' });
  const progress = h('progress', { id: 'import-progress', max: 1, value: 0, 'aria-label': 'Import progress', hidden: true });
  const progressText = h('p', { id: 'import-progress-text', class: 'muted', 'aria-live': 'polite' });
  const cancel = h('button', { type: 'button', id: 'import-cancel', hidden: true }, 'Cancel the import');
  const exportButton = h('button', { type: 'button', class: 'primary', id: 'export' }, 'Export all notes as a zip');
  const exportText = h('p', { class: 'muted', 'aria-live': 'polite' });
  let busy = false;
  let job = 0;
  let last: Choice | null = null;
  let disposed = false;

  const setProgress = (p: ImportProgress) => {
    progress.hidden = false;
    if (p.phase === 'read') {
      progress.max = Math.max(1, p.total);
      progress.value = p.done;
      progressText.textContent = `Reading the files: ${p.done.toLocaleString('en-US')} of ${p.total.toLocaleString('en-US')}`;
    } else if (p.phase === 'compile') {
      progress.removeAttribute('value');
      progressText.textContent = `Checking and compiling ${plural(p.documents, 'document')}…`;
    } else if (p.phase === 'store') {
      progress.removeAttribute('value');
      progressText.textContent = 'Saving in this browser… (this can no longer be cancelled)';
      cancel.hidden = true;
    }
  };
  const onProgress = (e: Event) => {
    const { job: j, progress: p } = (e as CustomEvent<{ job: number; progress: ImportProgress }>).detail;
    if (j === job) setProgress(p);
  };
  app.engine.addEventListener('progress', onProgress);
  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    const ok = await app.call('importCancel', job);
    if (!ok) progressText.textContent = 'Too late to cancel: the import is being saved.';
  });
  const idle = () => {
    busy = false;
    cancel.hidden = true;
    cancel.disabled = false;
    progress.hidden = true;
  };

  const plan = async (choice: Choice) => {
    if (busy) return;
    busy = true;
    last = choice;
    job = nextJob++;
    fill(planArea);
    cancel.hidden = false;
    progressText.textContent = `Reading ${plural(choice.pending?.length ?? choice.files.length, 'file')}…`;
    const options: ImportOptions = {
      bundle: choice.loose || oneBundle.checked ? bundleName.value.trim() || choice.folder : null,
      loose: choice.loose,
      folder: choice.folder,
    };
    try {
      // The files cross to the worker as they are (File objects, which the worker opens and
      // measures: a File's size can cost the browser a trip to disk the first time it is
      // asked), a slice at a time, each slice as many files as the last one's time per file
      // says fit in a few milliseconds on this thread, the message included: the page never
      // holds still for long, however many files and however loaded the machine. A picked
      // folder's paths are read here too, not in the event that brought them.
      let handed = 0;
      let perFile = SLICE_MS / FIRST_SLICE;
      let want = FIRST_SLICE;
      let at = 0;
      const pending = choice.pending;
      if (pending) choice.files = [];
      const total = pending ? pending.length : choice.files.length;
      while (at < total) {
        const started = performance.now();
        // At most twice the last slice: one fast slice does not make the next one huge.
        want = Math.max(1, Math.min(MOST_PER_SLICE, 2 * want, Math.floor(SLICE_MS / perFile)));
        const slice: Array<{ rel: string; file: File | null }> = [];
        const from = at;
        const end = Math.min(total, at + want);
        for (; at < end; at++) {
          let f: Picked;
          if (pending) choice.files.push((f = { file: pending[at] }));
          else f = choice.files[at];
          const rel = f.rel ?? relativePath(f.file);
          if (rel.split('/').some((s) => s.startsWith('.'))) continue;
          slice.push({ rel, file: /\.md$/i.test(rel) ? f.file : null });
        }
        handed += slice.length;
        // The slice's time runs until the worker has it: the File objects are cloned inside
        // call(), but the browser finishes passing them on in later tasks of this thread,
        // which the call's own time does not show (20,000 files in slices sized by it alone
        // gave one task of 51-59 ms).
        await app.call('importFiles', job, slice);
        const took = performance.now() - started;
        perFile = Math.max(took / (end - from), 1e-4);
        progressText.textContent = `Handing over the files: ${handed.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}`;
      }
      if (pending) {
        choice.pending = undefined;
        choice.drained?.();
      }
      window.__notesPerf.marks.importPosted = performance.now();
      const p = await app.call('importPlan', job, options);
      if (disposed) return;
      window.__notesPerf.marks.importPlanMs = p.ms;
      progressText.textContent = '';
      showPlan(p);
    } catch (e) {
      if ((e as Error).name === 'CancelledError') {
        progressText.textContent = 'Cancelled: nothing was imported.';
        announce(progressText.textContent);
      } else {
        progressText.textContent = '';
        showError(e, 'read the files');
      }
    } finally {
      idle();
    }
  };

  const showPlan = (p: ImportPlan) => {
    const skip = h('input', { type: 'checkbox', id: 'skip-invalid' });
    const replace = h('input', { type: 'checkbox', id: 'replace-differing' });
    const drop = h('input', { type: 'checkbox', id: 'delete-missing' });
    const go = h('button', { type: 'button', class: 'primary', id: 'import-go' }, '');
    const discard = h('button', { type: 'button', id: 'import-discard' }, 'Discard');
    const count = () => p.fresh + (replace.checked ? p.differs : 0) + (drop.checked ? p.missing : 0);
    const label = () => {
      const n = count();
      go.textContent = n === 0 ? 'Nothing to import' : `Import ${plural(n, 'change')} as one revision`;
      go.disabled = n === 0 || (p.invalid.length > 0 && !skip.checked);
    };
    for (const c of [skip, replace, drop]) c.addEventListener('change', label);
    label();
    go.addEventListener('click', () => void commit(p, { skipInvalid: skip.checked, keepStored: !replace.checked, keepMissing: !drop.checked }));
    discard.addEventListener('click', () => {
      void app.call('importDiscard', p.job);
      fill(planArea);
    });
    // The folder rule decides (docs/import.md); the person may make the folder one bundle of
    // a name they choose, and hand the decision back.
    const chosen = !last?.loose && oneBundle.checked;
    const switchLayout =
      p.layout === 'files'
        ? null
        : p.layout === 'bundles'
          ? h('button', { type: 'button', id: 'switch-layout', onclick: () => ((oneBundle.checked = true), last && void plan(last)) }, `Import the folder as one bundle (${bundleName.value.trim() || last?.folder})`)
          : chosen
            ? h('button', { type: 'button', id: 'switch-layout', onclick: () => ((oneBundle.checked = false), last && void plan(last)) }, 'Let the folder decide')
            : null;
    // The rule's line is the command line's; its flag is the checkbox here.
    const reason = p.layoutReason.replace(/; --bundle <name> names it$/, '').replace(/^reading /, 'Reading ');
    fill(
      planArea,
      h(
        'section',
        { class: 'banner', 'aria-labelledby': 'plan-h', id: 'import-plan' },
        h('h3', { id: 'plan-h' }, 'Ready to import'),
        h('p', { id: 'plan-layout' }, reason, p.layout === 'bundle' && !chosen ? '. Tick “Import the folder as one bundle” above to name the bundle yourself. ' : '. ', switchLayout),
        h(
          'p',
          { id: 'plan-summary' },
          `${plural(p.documents, 'Markdown file')} in ${plural(p.bundles.length, 'bundle')}${p.bundles.length ? ` (${p.bundles.slice(0, 8).join(', ')}${p.bundles.length > 8 ? ', …' : ''})` : ''}: `,
          `${p.fresh.toLocaleString('en-US')} new, ${p.same.toLocaleString('en-US')} already stored as they are, ${p.differs.toLocaleString('en-US')} different from the stored version.`,
          p.ignored ? ` ${plural(p.ignored, 'other file')} left out (not Markdown).` : '',
        ),
        p.invalid.length
          ? h(
              'div',
              { class: 'banner error', id: 'invalid-names' },
              h('p', null, `${plural(p.invalid.length, 'file')} cannot be imported as ${p.invalid.length === 1 ? 'it is' : 'they are'}. Nothing is imported unless you skip ${p.invalid.length === 1 ? 'it' : 'them'}:`),
              h('ul', { class: 'problems' }, p.invalid.slice(0, 50).map((i) => h('li', null, h('code', null, i.file), `: ${i.problem}`))),
              p.invalid.length > 50 ? h('p', null, `… and ${plural(p.invalid.length - 50, 'more')}.`) : null,
              h('div', null, skip, h('label', { for: 'skip-invalid' }, ` Skip ${p.invalid.length === 1 ? 'it' : `these ${p.invalid.length.toLocaleString('en-US')}`} and import the rest`)),
            )
          : null,
        p.differs
          ? h(
              'div',
              null,
              replace,
              h('label', { for: 'replace-differing' }, ` Replace the ${plural(p.differs, 'stored note')} that differ${p.differs === 1 ? 's' : ''}: `),
              h('span', { class: 'muted' }, p.differing.join(', ') + (p.differs > p.differing.length ? ', …' : '')),
              h(
                'p',
                { class: 'muted' },
                'As on the command line, a note is replaced only when it did not change here since this folder was last imported; if it did, nothing is imported and the page names it. Unticked, the stored versions are kept.',
              ),
            )
          : null,
        p.missing
          ? h(
              'div',
              null,
              drop,
              h('label', { for: 'delete-missing' }, ` Delete the ${plural(p.missing, 'note')} an earlier import of this folder brought in that ${p.missing === 1 ? 'is' : 'are'} gone from it: `),
              h('span', { class: 'muted' }, p.missingExamples.join(', ') + (p.missing > p.missingExamples.length ? ', …' : '')),
            )
          : null,
        p.warnings.length ? h('ul', { class: 'warnings' }, p.warnings.slice(0, 20).map((w) => h('li', null, w))) : null,
        h('div', { class: 'toolbar' }, go, discard),
      ),
    );
    go.focus();
  };

  const commit = async (p: ImportPlan, choices: { skipInvalid: boolean; keepStored: boolean; keepMissing: boolean }) => {
    if (busy) return;
    busy = true;
    job = p.job;
    cancel.hidden = false;
    fill(planArea);
    setProgress({ phase: 'compile', documents: p.documents });
    let outcome: ImportOutcome;
    try {
      outcome = await app.call('importCommit', p.job, choices);
    } catch (e) {
      progressText.textContent = 'Nothing was imported.';
      showError(e, 'import the files');
      idle();
      return;
    }
    idle();
    if (disposed) return;
    window.__notesPerf.marks.importCommitMs = outcome.ms;
    if (outcome.cancelled) {
      progressText.textContent = 'Cancelled: nothing was imported.';
      announce(progressText.textContent);
      return;
    }
    progressText.textContent = outcome.committed ? `Imported ${plural(outcome.documents, 'change')} in one revision.` : 'Nothing changed: every file is already stored as it is.';
    announce(progressText.textContent);
    fill(
      planArea,
      h(
        'section',
        { class: 'banner', id: 'import-done', 'aria-labelledby': 'done-h' },
        h('h3', { id: 'done-h' }, outcome.committed ? 'Imported' : 'Nothing to import'),
        h(
          'p',
          null,
          outcome.committed ? [`One revision, `, h('a', { href: routes.revision(outcome.revision) }, outcome.revision.slice(0, 12)), `; the notes now hold ${plural(outcome.concepts, 'note')}.`] : '',
          ` ${plural(outcome.diagnostics.length, 'diagnostic')} in the imported files.`,
        ),
        outcome.diagnostics.length
          ? h(
              'details',
              null,
              h('summary', null, 'Diagnostics'),
              h('ul', { class: 'diagnostics' }, outcome.diagnostics.slice(0, 200).map((d) => h('li', null, h('a', { href: routes.edit(d.bundle, d.path) }, `${d.bundle}/${d.path}`), `: ${d.message}`))),
            )
          : null,
      ),
    );
  };

  const exportZip = async () => {
    exportButton.disabled = true;
    exportText.textContent = 'Reading every document…';
    try {
      const { bytes, files } = await app.call('exportZip');
      const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/zip' }));
      const a = h('a', { href: url, download: `${app.tenant}-notes.zip`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      exportText.textContent = `Exported ${plural(files, 'file')} (${bytes.length.toLocaleString('en-US')} bytes).`;
      announce(exportText.textContent);
    } catch (e) {
      exportText.textContent = '';
      showError(e, 'export the notes');
    } finally {
      exportButton.disabled = false;
    }
  };
  exportButton.addEventListener('click', () => void exportZip());

  folderInput.addEventListener('change', () => {
    window.__notesPerf.marks.importPicked = performance.now();
    // The files as the input holds them: the hand-over copies them and reads their paths in
    // its slices (at 20,000 files, doing either here would hold the page for a long task),
    // then clears the input, so that the same folder can be chosen again.
    const list = folderInput.files;
    if (!list || list.length === 0) return;
    const folder = list[0].webkitRelativePath.split('/')[0] || 'folder';
    if (!oneBundle.checked || bundleName.value.trim() === '' || bundleName.dataset.auto === 'true') {
      bundleName.value = folder.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64) || 'notes';
      bundleName.dataset.auto = 'true';
    }
    void plan({ files: [], pending: list, drained: () => (folderInput.value = ''), folder, loose: false });
  });
  bundleName.addEventListener('input', () => (bundleName.dataset.auto = 'false'));
  filesInput.addEventListener('change', () => {
    const picked = [...(filesInput.files ?? [])].map((file) => ({ rel: file.name, file }));
    filesInput.value = '';
    void plan({ files: picked, folder: 'files', loose: true });
  });

  const zone = h(
    'div',
    { class: 'dropzone', id: 'dropzone' },
    h('p', null, 'Drop a folder or Markdown files here, or'),
    h(
      'div',
      { class: 'toolbar', style: 'justify-content: center' },
      h('button', { type: 'button', class: 'primary', id: 'choose-folder', onclick: () => folderInput.click() }, 'Choose a folder…'),
      h('button', { type: 'button', id: 'choose-files', onclick: () => filesInput.click() }, 'Choose Markdown files…'),
    ),
    folderInput,
    filesInput,
  );
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (!e.dataTransfer) return;
    void dropped(e.dataTransfer).then(plan, (err) => showError(err, 'read the dropped files'));
  });

  fill(
    main,
    h('h1', null, 'Import & export'),
    h(
      'section',
      { 'aria-labelledby': 'import-h' },
      h('h2', { id: 'import-h' }, 'Import a folder of Markdown'),
      h(
        'p',
        null,
        'Each folder inside the chosen folder becomes a bundle, and every .md file in it, at any depth, a note; or the whole folder is one bundle. Names starting with a dot are skipped. The import is one revision, as on the command line: it lands whole or not at all.',
      ),
      h(
        'div',
        { class: 'fields' },
        h('div', null, oneBundle, h('label', { for: 'one-bundle' }, ' Import the folder as one bundle, named:')),
        h('div', { class: 'field' }, h('label', { for: 'bundle-name', class: 'sr-only' }, 'Bundle name'), bundleName, h('small', { id: 'bundle-name-help', class: 'muted' }, 'Also the bundle that loose files go into.')),
      ),
      zone,
      progress,
      progressText,
      h('div', { class: 'toolbar' }, cancel),
      planArea,
    ),
    h(
      'section',
      { 'aria-labelledby': 'export-h' },
      h('h2', { id: 'export-h' }, 'Export'),
      h('p', null, 'Every stored document, byte for byte, as ', h('code', null, '<bundle>/<path>'), ' in one zip: the same layout as the command line’s export, ready for ', h('code', null, 'langonrock import'), '.'),
      h('div', { class: 'toolbar' }, exportButton),
      exportText,
    ),
  );
  return {
    dispose: () => {
      disposed = true;
      app.engine.removeEventListener('progress', onProgress);
    },
  };
}
