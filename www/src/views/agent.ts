// "What an agent sees": the manifest exactly as an agent reads it, its size in tokens
// (ceil(UTF-16 length / 4), as agent.md counts), the tool surface the package gives agents,
// a console to call one tool and see its answer verbatim, and how to mount these notes in an
// agent: in JavaScript through the package, or exported for the native MCP server.

import type { App } from '../app.js';
import { h, fill } from '../lib/dom.js';
import { setTitle, showError } from '../ui.js';
import type { View } from './view.js';

/** The token estimate of agent.md and cli.md: ceil(UTF-16 length / 4). */
function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function agentView(app: App, main: HTMLElement): View {
  setTitle('What an agent sees');
  let disposed = false;

  const sizeLine = (manifest: string) => {
    const rows = manifest.split('\n').filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('id\t')).length;
    return [
      h('strong', null, `~${tokens(manifest).toLocaleString('en-US')} tokens`),
      ` (ceil(UTF-16 length / 4)): ${manifest.length.toLocaleString('en-US')} characters, ${rows.toLocaleString('en-US')} note${rows === 1 ? '' : 's'}, ${app.bundles.length} bundle${app.bundles.length === 1 ? '' : 's'}.`,
    ];
  };

  const update = async () => {
    const manifest = await app.call('manifest');
    const pre = main.querySelector('#manifest-tsv');
    const size = main.querySelector('#manifest-size');
    if (disposed || !pre || !size) return;
    pre.textContent = manifest;
    fill(size, sizeLine(manifest));
  };

  const draw = async () => {
    const { manifest, tools, firstId } = await app.call('agent');
    if (disposed) return;
    const toolSelect = h('select', { id: 'tool-name' }, tools.map((t) => h('option', { value: t.name }, `${t.name}: ${t.title}`)));
    const args = h('textarea', { id: 'tool-args', class: 'source', style: 'min-height: 5rem', spellcheck: 'false' }, '{"query": "revenue"}');
    const out = h('pre', { class: 'code', id: 'tool-out', tabindex: '0', 'aria-live': 'polite' }, '');
    const examples: Record<string, string> = {
      manifest: '{}',
      search: '{"query": "revenue"}',
      get: `{"ids": [${JSON.stringify(firstId ?? 'some-id')}], "limit": 400}`,
      snapshot: '{}',
      write: '{"bundle": "notes", "path": "example.md", "content": "---\\ntype: note\\n---\\n\\nHello."}',
      delete: '{"bundle": "notes", "path": "example.md"}',
    };
    toolSelect.value = 'search';
    toolSelect.addEventListener('change', () => (args.value = examples[toolSelect.value] ?? '{}'));
    const call = h('button', { type: 'submit', class: 'primary' }, 'Call');
    const consoleForm = h(
      'form',
      {
        onsubmit: async (e: Event) => {
          e.preventDefault();
          let parsed: unknown;
          try {
            parsed = JSON.parse(args.value || '{}');
          } catch (err) {
            out.textContent = `arguments are not JSON: ${(err as Error).message}`;
            return;
          }
          const r = await app.call('callTool', toolSelect.value, parsed);
          out.textContent = `${r.isError ? '[isError] ' : ''}${r.text}`;
        },
      },
      h('div', { class: 'fields' }, h('div', { class: 'field' }, h('label', { for: 'tool-name' }, 'Tool'), toolSelect)),
      h('div', { class: 'field' }, h('label', { for: 'tool-args' }, 'Arguments (JSON)'), args),
      h('div', { class: 'toolbar' }, call),
      out,
    );
    const js = `import { open, indexedDb } from 'langonrock';

// The same notes this page shows: IndexedDB database "${app.database}", tenant "${app.tenant}".
const notes = await open({ tenant: '${app.tenant}', store: indexedDb({ name: '${app.database}' }) });

// Hand these to your agent loop as its tools (name, description, JSON Schema) ...
const tools = notes.tools();
// ... and answer each tool call with exactly what the MCP server would say.
const { text, isError } = await notes.callTool('search', { query: 'revenue' });`;
    const mcp = `# 1. Export the notes on the "Import & export" page, then:
unzip ${app.tenant}-notes.zip -d ${app.tenant}-notes
langonrock import ${app.tenant}-notes --tenant ${app.tenant} --data ~/.local/share/langonrock

# 2. Serve them to any MCP client over stdio:
langonrock mcp "okf:///$HOME/.local/share/langonrock?tenant=${app.tenant}"

# or, without the native binary (Node, files store):
npx langonrock mcp "okf:///$HOME/.local/share/langonrock?tenant=${app.tenant}"`;
    const client = JSON.stringify({ mcpServers: { notes: { command: 'langonrock', args: ['mcp', `okf:///home/you/.local/share/langonrock?tenant=${app.tenant}`] } } }, null, 2);
    fill(
      main,
      h('h1', null, 'What an agent sees'),
      h(
        'p',
        null,
        'An agent reads these notes through the same verbs as this page: first the manifest, one line per concept, then ',
        h('code', null, 'search'),
        ' and ',
        h('code', null, 'get'),
        ' for the parts it needs.',
      ),
      h(
        'section',
        { 'aria-labelledby': 'manifest-h' },
        h('h2', { id: 'manifest-h' }, 'The manifest'),
        h('p', { id: 'manifest-size' }, sizeLine(manifest)),
        h('pre', { class: 'tsv', id: 'manifest-tsv', tabindex: '0', 'aria-label': 'Manifest TSV' }, manifest),
      ),
      h(
        'section',
        { 'aria-labelledby': 'tools-h' },
        h('h2', { id: 'tools-h' }, 'The tools'),
        h('p', null, `The package's tool surface: ${tools.length} tools, with the descriptions the MCP server gives (the manifest tool's ends with advice computed from this manifest).`),
        h(
          'table',
          { class: 'list' },
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Tool'), h('th', { scope: 'col' }, 'Description'))),
          h(
            'tbody',
            null,
            tools.map((t) =>
              h('tr', null, h('td', null, h('code', null, t.name), h('br'), h('span', { class: 'muted' }, t.title)), h('td', null, h('details', null, h('summary', null, t.description.split('\n')[0]), h('pre', { class: 'code' }, t.description), h('pre', { class: 'code' }, JSON.stringify(t.inputSchema, null, 2))))),
            ),
          ),
        ),
        h('h3', null, 'Call a tool as an agent would'),
        consoleForm,
      ),
      h(
        'section',
        { 'aria-labelledby': 'mount-h' },
        h('h2', { id: 'mount-h' }, 'Mount these notes in an agent'),
        h('h3', null, 'In JavaScript, in this browser or in Node'),
        h('pre', { class: 'code' }, js),
        h('h3', null, 'Through the native MCP server'),
        h('pre', { class: 'code' }, mcp),
        h('p', null, 'In an MCP client’s configuration:'),
        h('pre', { class: 'code' }, client),
      ),
    );
  };
  void draw().catch((e) => showError(e, 'show what an agent sees'));
  return {
    refresh: () => void update().catch((e) => showError(e, 'show what an agent sees')),
    dispose: () => {
      disposed = true;
    },
  };
}
