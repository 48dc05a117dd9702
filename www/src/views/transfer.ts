// Import and export. Import reads a folder of Markdown as the CLI does (compile.md §1.1: each
// folder in it is a bundle, `.md` files at any depth are documents, names starting with `.`
// are skipped), or a set of files as one bundle, from a picker or a drop. It compares each
// file with the stored version by source hash: new files are created, equal ones skipped,
// and ones that differ are replaced only when the person says so (each such write names the
// hash it replaces). The writes commit through `transact`, in batches within its limits
// (1,000 changes, 16 MiB), with a progress bar. Export zips every stored document, exact
// bytes, as `<bundle>/<path>`.

import type { App } from '../app.js';
import type { Change, Diagnostic, RevisionResult } from 'langonrock';
import { zipSync } from 'fflate';
import { h, fill } from '../lib/dom.js';
import { routes, setTitle, announce, showError } from '../ui.js';
import type { View } from './view.js';

interface Picked {
  /** The path inside the chosen folder (its own name left out), `/`-separated. */
  rel: string;
  file: File;
}

interface Planned {
  bundle: string;
  path: string;
  content: string;
  bytes: number;
  hash: string;
  state: 'new' | 'same' | 'differs';
  replaces?: string;
}

const MAX_CHANGES = 1000;
const MAX_BYTES = 16 * 1024 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes.slice() as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

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
async function dropped(data: DataTransfer): Promise<Picked[]> {
  const entries = [...data.items].map((i) => i.webkitGetAsEntry()).filter((e): e is FileSystemEntry => e !== null);
  const out: Picked[] = [];
  // Files put on the drag by a page rather than a file manager have no entries: take them as
  // loose files.
  if (entries.length === 0) return [...data.files].map((file) => ({ rel: file.name, file }));
  const dirs = entries.filter((e) => e.isDirectory);
  if (dirs.length === 1 && entries.length === 1) {
    await walk(dirs[0], '', out);
    return out.map((p) => ({ ...p, rel: p.rel.slice(dirs[0].name.length + 1) }));
  }
  for (const e of entries) await walk(e, '', out);
  return out;
}

export function transferView(app: App, main: HTMLElement): View {
  setTitle('Import & export');
  // The pickers open from the buttons below; the inputs themselves stay out of sight.
  const folderInput = h('input', { type: 'file', id: 'folder-input', multiple: true, webkitdirectory: true, hidden: true, 'aria-label': 'Folder to import' });
  const filesInput = h('input', { type: 'file', id: 'files-input', multiple: true, accept: '.md,text/markdown', hidden: true, 'aria-label': 'Markdown files to import' });
  const oneBundle = h('input', { type: 'checkbox', id: 'one-bundle' });
  const bundleName = h('input', { type: 'text', id: 'bundle-name', value: 'notes', autocomplete: 'off' });
  const planArea = h('div', { class: 'plan', 'aria-live': 'polite' });
  const progress = h('progress', { id: 'import-progress', max: 1, value: 0, 'aria-label': 'Import progress', hidden: true });
  const progressText = h('p', { id: 'import-progress-text', class: 'muted', 'aria-live': 'polite' });
  const exportButton = h('button', { type: 'button', class: 'primary', id: 'export' }, 'Export all notes as a zip');
  const exportProgress = h('progress', { max: 1, value: 0, 'aria-label': 'Export progress', hidden: true });
  const exportText = h('p', { class: 'muted', 'aria-live': 'polite' });
  let busy = false;

  const setProgress = (done: number, total: number, text: string) => {
    progress.hidden = false;
    progress.max = Math.max(1, total);
    progress.value = done;
    progressText.textContent = text;
  };

  const plan = async (picked: Picked[], looseFilesAsBundle: boolean) => {
    if (busy) return;
    busy = true;
    const started = performance.now();
    try {
      const warnings: string[] = [];
      const problems: string[] = [];
      let others = 0;
      const asOne = oneBundle.checked || looseFilesAsBundle;
      const single = bundleName.value.trim();
      if (asOne && !single) throw new Error('name the bundle to import into');
      const existingBundles = new Map(app.bundles.map((b) => [b.toLowerCase(), b]));
      const docs: Array<{ bundle: string; path: string; file: File }> = [];
      for (const p of picked.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))) {
        const segments = p.rel.split('/');
        if (segments.some((s) => s.startsWith('.'))) continue;
        if (!/\.md$/i.test(p.rel)) {
          others++;
          continue;
        }
        let bundle: string;
        let path: string;
        if (asOne) {
          bundle = single;
          path = p.rel;
        } else if (segments.length === 1) {
          warnings.push(`${p.rel}: not inside a bundle folder, ignored (import it with “Import into one bundle”)`);
          continue;
        } else {
          bundle = segments[0];
          path = segments.slice(1).join('/');
        }
        bundle = existingBundles.get(bundle.toLowerCase()) ?? bundle.normalize('NFC');
        docs.push({ bundle, path: path.normalize('NFC'), file: p.file });
      }
      // Files are read a chunk at a time through one Blob: a browser reads one blob of many
      // files far faster than many small files one by one.
      const planned: Planned[] = [];
      const CHUNK = 256;
      for (let i = 0; i < docs.length; i += CHUNK) {
        setProgress(i, docs.length, `Reading files: ${i} of ${docs.length}`);
        const chunk = docs.slice(i, i + CHUNK);
        const all = new Uint8Array(await new Blob(chunk.map((d) => d.file)).arrayBuffer());
        let at = 0;
        const read = chunk.map((d) => {
          const bytes = all.subarray(at, at + d.file.size);
          at += d.file.size;
          return { d, bytes };
        });
        const hashes = await Promise.all(read.map((r) => sha256(r.bytes)));
        read.forEach(({ d, bytes }, j) => {
          let content: string;
          try {
            content = decoder.decode(bytes);
          } catch {
            problems.push(`${d.bundle}/${d.path}: source must contain valid UTF-8`);
            return;
          }
          const existing = app.entry(d.bundle, d.path);
          const hash = hashes[j];
          const state = !existing ? 'new' : existing.hash === hash ? 'same' : 'differs';
          planned.push({ bundle: d.bundle, path: d.path, content, bytes: bytes.length, hash, state, replaces: existing?.hash });
        });
      }
      progress.hidden = true;
      progressText.textContent = '';
      window.__notesPerf.marks.importPlanMs = performance.now() - started;
      showPlan(planned, warnings, problems, others);
    } catch (e) {
      showError(e, 'import');
    } finally {
      busy = false;
    }
  };

  const showPlan = (planned: Planned[], warnings: string[], problems: string[], others: number) => {
    const fresh = planned.filter((p) => p.state === 'new');
    const same = planned.filter((p) => p.state === 'same');
    const differs = planned.filter((p) => p.state === 'differs');
    const replace = h('input', { type: 'checkbox', id: 'replace-differing' });
    const go = h('button', { type: 'button', class: 'primary', id: 'import-go' }, '');
    const count = () => fresh.length + (replace.checked ? differs.length : 0);
    const label = () => {
      go.textContent = `Import ${count()} document${count() === 1 ? '' : 's'}`;
      go.disabled = count() === 0;
    };
    replace.addEventListener('change', label);
    label();
    go.addEventListener('click', () => void commit([...fresh, ...(replace.checked ? differs : [])]));
    const bundles = [...new Set(planned.map((p) => p.bundle))];
    fill(
      planArea,
      h(
        'section',
        { class: 'banner', 'aria-labelledby': 'plan-h' },
        h('h3', { id: 'plan-h' }, 'Ready to import'),
        h(
          'p',
          null,
          `${planned.length} Markdown file${planned.length === 1 ? '' : 's'} in ${bundles.length} bundle${bundles.length === 1 ? '' : 's'} (${bundles.join(', ')}): `,
          `${fresh.length} new, ${same.length} already stored as they are, ${differs.length} different from the stored version.`,
          others ? ` ${others} other file${others === 1 ? '' : 's'} ignored.` : '',
        ),
        differs.length
          ? h(
              'div',
              null,
              replace,
              h('label', { for: 'replace-differing' }, ` Also replace the ${differs.length} stored note${differs.length === 1 ? '' : 's'} that differ: `),
              h('span', { class: 'muted' }, differs.slice(0, 10).map((d) => `${d.bundle}/${d.path}`).join(', ') + (differs.length > 10 ? ', …' : '')),
            )
          : null,
        warnings.length ? h('ul', { class: 'warnings' }, warnings.map((w) => h('li', null, `warn: ${w}`))) : null,
        problems.length ? h('ul', { class: 'problems' }, problems.map((w) => h('li', null, `skipped: ${w}`))) : null,
        h('div', { class: 'toolbar' }, go),
      ),
    );
    go.focus();
  };

  const commit = async (docs: Planned[]) => {
    if (busy) return;
    busy = true;
    const batches: Planned[][] = [];
    let batch: Planned[] = [];
    let bytes = 0;
    for (const d of docs) {
      if (batch.length && (batch.length >= MAX_CHANGES || bytes + d.bytes > MAX_BYTES)) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(d);
      bytes += d.bytes;
    }
    if (batch.length) batches.push(batch);
    let done = 0;
    let last: RevisionResult | null = null;
    const started = performance.now();
    try {
      setProgress(0, docs.length, `Importing: 0 of ${docs.length}`);
      for (const b of batches) {
        const changes: Change[] = b.map((d) =>
          d.state === 'differs' ? { operation: 'write', bundle: d.bundle, path: d.path, content: d.content, replaces: d.replaces } : { operation: 'write', bundle: d.bundle, path: d.path, content: d.content },
        );
        last = await app.conn.transact({ changes });
        done += b.length;
        setProgress(done, docs.length, `Importing: ${done} of ${docs.length}`);
      }
      const ms = performance.now() - started;
      if (last) app.noteTenantDiagnostics(last.diagnostics);
      await app.refresh();
      const imported = new Set(docs.map((d) => `${d.bundle}\n${d.path}`));
      const diags: Diagnostic[] = (last?.diagnostics ?? []).filter((d) => imported.has(`${d.bundle}\n${d.path}`));
      progressText.textContent = `Imported ${docs.length} document${docs.length === 1 ? '' : 's'} in ${batches.length} revision${batches.length === 1 ? '' : 's'}.`;
      announce(progressText.textContent);
      window.__notesPerf.marks.importCommitMs = ms;
      fill(
        planArea,
        h(
          'section',
          { class: 'banner', id: 'import-done', 'aria-labelledby': 'done-h' },
          h('h3', { id: 'done-h' }, 'Imported'),
          h('p', null, `${docs.length} document${docs.length === 1 ? '' : 's'}; the tenant now holds ${last?.concepts ?? app.snapshot.concepts} concepts.`, ` ${diags.length} diagnostic${diags.length === 1 ? '' : 's'} in the imported files.`),
          diags.length
            ? h(
                'details',
                null,
                h('summary', null, 'Diagnostics'),
                h('ul', { class: 'diagnostics' }, diags.slice(0, 200).map((d) => h('li', null, h('a', { href: routes.edit(d.bundle, d.path) }, `${d.bundle}/${d.path}`), `: ${d.message}`))),
              )
            : null,
        ),
      );
    } catch (e) {
      progressText.textContent = `Stopped after ${done} of ${docs.length} documents.`;
      showError(e, (e as { code?: string }).code === 'CONFLICT' ? 'import (a note changed meanwhile: choose the folder again)' : 'import');
      await app.refresh();
    } finally {
      busy = false;
    }
  };

  const exportZip = async () => {
    if (busy) return;
    busy = true;
    exportButton.disabled = true;
    try {
      const entries = await app.conn.listSource();
      const encoder = new TextEncoder();
      const files: Record<string, [Uint8Array, { mtime: Date }]> = {};
      const mtime = new Date(1980, 0, 1);
      exportProgress.hidden = false;
      exportProgress.max = Math.max(1, entries.length);
      let done = 0;
      for (let i = 0; i < entries.length; i += 32) {
        const slice = entries.slice(i, i + 32);
        const texts = await Promise.all(slice.map((e) => app.conn.readSource(e.bundle, e.path)));
        slice.forEach((e, j) => {
          const t = texts[j];
          if (t) files[`${e.bundle}/${e.path}`] = [encoder.encode(t.content), { mtime }];
        });
        done += slice.length;
        exportProgress.value = done;
        exportText.textContent = `Reading: ${done} of ${entries.length}`;
      }
      const zip = zipSync(files, { level: 6 });
      const blob = new Blob([zip as Uint8Array<ArrayBuffer>], { type: 'application/zip' });
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `${app.tenant}-notes.zip`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      exportText.textContent = `Exported ${entries.length} file${entries.length === 1 ? '' : 's'} (${zip.length.toLocaleString()} bytes).`;
      announce(exportText.textContent);
    } catch (e) {
      showError(e, 'export');
    } finally {
      busy = false;
      exportButton.disabled = false;
      exportProgress.hidden = true;
    }
  };
  exportButton.addEventListener('click', () => void exportZip());

  folderInput.addEventListener('change', () => {
    const picked = [...(folderInput.files ?? [])].map((file) => ({ rel: file.webkitRelativePath.split('/').slice(1).join('/'), file }));
    folderInput.value = '';
    void plan(picked, false);
  });
  filesInput.addEventListener('change', () => {
    const picked = [...(filesInput.files ?? [])].map((file) => ({ rel: file.name, file }));
    filesInput.value = '';
    void plan(picked, true);
  });

  const zone = h(
    'div',
    { class: 'dropzone', id: 'dropzone' },
    h('p', null, 'Drop a folder (or Markdown files) here, or'),
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
    void dropped(e.dataTransfer).then((picked) => plan(picked, picked.every((p) => !p.rel.includes('/'))));
  });

  fill(
    main,
    h('h1', null, 'Import & export'),
    h(
      'section',
      { 'aria-labelledby': 'import-h' },
      h('h2', { id: 'import-h' }, 'Import a folder of Markdown'),
      h('p', null, 'Each folder inside the chosen folder becomes a bundle, and every .md file in it, at any depth, a note. Files and folders whose names start with a dot are skipped. Loose files go into one bundle.'),
      h('div', { class: 'fields' }, h('div', null, oneBundle, h('label', { for: 'one-bundle' }, ' Import into one bundle, named:')), h('div', { class: 'field' }, h('label', { for: 'bundle-name', class: 'sr-only' }, 'Bundle name'), bundleName)),
      zone,
      progress,
      progressText,
      planArea,
    ),
    h(
      'section',
      { 'aria-labelledby': 'export-h' },
      h('h2', { id: 'export-h' }, 'Export'),
      h('p', null, 'Every stored document, byte for byte, as ', h('code', null, '<bundle>/<path>'), ' in one zip: the same layout as the command line’s export, ready for ', h('code', null, 'langonrock import'), '.'),
      h('div', { class: 'toolbar' }, exportButton),
      exportProgress,
      exportText,
    ),
  );
  return {};
}
