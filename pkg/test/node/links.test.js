// `linkTargets(entries)`: where a link goes, by the compiler's rule (compile.md §6.2–§6.3),
// among a connection's listed documents; its answers agree with the links the engine
// compiled.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, memory, linkTargets } from 'langonrock';

const NOW = () => new Date('2026-05-01T09:30:00.000Z');

test('linkTargets follows Markdown and wiki links as the engine resolved them', async () => {
  const c = await open({ tenant: 'acme', store: memory(), now: NOW });
  await c.transact({ changes: [
    { operation: 'write', bundle: 'sales', path: 'tables/orders.md', content: '---\ntype: table\n---\nSee [c](customers.md), [[orders]], [[My Note|a note]], [[ops/orders]] and [[Gamma ray]].\n' },
    { operation: 'write', bundle: 'sales', path: 'tables/customers.md', content: '---\ntype: table\n---\nCustomers.\n' },
    { operation: 'write', bundle: 'sales', path: 'My_Note.md', content: 'A note.\n' },
    { operation: 'write', bundle: 'sales', path: 'index.md', content: '# Sales\n' },
    { operation: 'write', bundle: 'ops', path: 'orders.md', content: '---\ntype: table\n---\nOps orders.\n' },
  ] });
  const t = linkTargets(await c.listSource());
  try {
    assert.deepEqual(t.markdown('sales', 'tables/orders.md', 'customers.md'), { kind: 'concept', id: 'customers' });
    assert.deepEqual(t.markdown('sales', 'tables/orders.md', '../index.md'), { kind: 'document', bundle: 'sales', path: 'index.md' });
    assert.deepEqual(t.markdown('sales', 'tables/orders.md', '../../up.md'), { kind: 'unresolved' });
    assert.deepEqual(t.markdown('sales', 'tables/orders.md', 'https://example.com'), { kind: 'external', href: 'https://example.com' });
    assert.deepEqual(t.markdown('sales', 'tables/orders.md', '#keys'), { kind: 'anchor', fragment: 'keys' });
    assert.deepEqual(t.wiki('sales', 'orders'), { kind: 'concept', id: 'sales/orders' });
    assert.deepEqual(t.wiki('ops', 'orders'), { kind: 'concept', id: 'ops/orders' });
    assert.deepEqual(t.wiki('sales', 'My Note|a note'), { kind: 'concept', id: 'My_Note' });
    assert.deepEqual(t.wiki('sales', 'Gamma ray'), { kind: 'unresolved', create: { bundle: 'sales', path: 'Gamma ray.md', title: 'Gamma ray' } });
    // The engine's own resolution of the same links.
    const row = (await c.manifestRows()).rows.find((r) => r.id === 'sales/orders');
    assert.deepEqual(row.links, ['My_Note', 'customers', 'ops/orders']);
  } finally {
    t.free();
    await c.close();
  }
});

test('linkTargets names the shape it takes', () => {
  assert.throws(() => linkTargets([{ bundle: 'sales' }]), (e) => e.code === 'INVALID' && /listSource's entries/.test(e.message));
  assert.throws(() => linkTargets('nope'), (e) => e.code === 'INVALID');
});
