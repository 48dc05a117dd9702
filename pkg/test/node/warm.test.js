// `connection.warm()`: a connection that opened from a derived record does its first
// commit's preparation (the texts' check, the incremental linker) when the host asks, and
// its commits then answer exactly as a cold connection's do.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open, memory } from 'langonrock';

const NOW = () => new Date('2026-05-01T09:30:00.000Z');

async function stored() {
  const store = memory();
  const c = await open({ tenant: 'acme', store, now: NOW });
  await c.write('sales', 'orders.md', '---\ntype: table\ntitle: Orders\n---\nOrders, see [[customers]].\n');
  await c.write('sales', 'customers.md', '---\ntype: table\n---\nCustomers.\n');
  // Closing writes the pending derived record: the next open decodes it.
  await c.close();
  return store;
}

async function edit(c) {
  const { hash } = await c.readSource('sales', 'customers.md');
  const r = await c.write('sales', 'customers.md', '---\ntype: table\n---\nCustomers, see [[orders]].\n', hash);
  return { snapshot: r.snapshot, manifest: await c.manifest(), search: await c.search('customers orders') };
}

test('warm readies a derived-record open once; the first commit after it agrees with a cold one', async () => {
  const store = await stored();
  const warm = await open({ tenant: 'acme', store: memory({ sharing: store }), now: NOW });
  assert.equal(await warm.warm(), true, 'a derived open has work to do');
  assert.equal(await warm.warm(), false, 'once');
  const a = await edit(warm);
  await warm.close();

  const store2 = await stored();
  const cold = await open({ tenant: 'acme', store: memory({ sharing: store2 }), now: NOW });
  const b = await edit(cold);
  await cold.close();
  assert.deepEqual(a, b);
});

test('warm on a connection that compiled has nothing to do, and on a closed one rejects', async () => {
  const c = await open({ tenant: 'acme', store: memory(), now: NOW });
  await c.write('n', 'a.md', '---\ntype: note\n---\nA.\n');
  assert.equal(await c.warm(), false);
  await c.close();
  await assert.rejects(c.warm(), { code: 'INVALID', message: 'connection is closed' });
});

test('derivedDelayMs holds the derived record back until flushDerived (or close) writes it', async () => {
  const store = memory();
  const derived = async () => (await (await store.open('acme')).keys()).filter((k) => k.key.kind === 'derived').length;
  const c = await open({ tenant: 'acme', store, now: NOW, derivedDelayMs: 60_000 });
  await c.write('n', 'a.md', '---\ntype: note\n---\nA.\n');
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(await derived(), 0, 'not after the default second');
  await c.flushDerived();
  assert.equal(await derived(), 1, 'written when flushed');
  await c.flushDerived();
  await c.close();
  await assert.rejects(open({ tenant: 'acme', store, derivedDelayMs: -1 }), { code: 'INVALID', message: 'open: derivedDelayMs must be a number of milliseconds from 0 to 2147483647' });
});
