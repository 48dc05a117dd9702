// The connection policy script (tests/data/sessions/policy.json) through the wasm bindings:
// every op as a WasmConnOp over the package's memory store, its steps traced as the native
// suite traces them (core/src/connection/tests.rs), so both hosts take the same decisions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { memory } from 'langonrock';
import { WasmEngine, WasmDerivedTimer, derivedDelayMs } from '../../gen/langonrock_wasm.js';
import { serveNeed } from '../../src/host.js';

const repo = new URL('../../../', import.meta.url);
const script = JSON.parse(await readFile(new URL('tests/data/sessions/policy.json', repo), 'utf8'));

async function drive(engine, store, op) {
  try {
    let step = op.resume(engine, undefined);
    while (!('done' in step)) step = op.resume(engine, await serveNeed(store, step));
    return step.done;
  } finally {
    op.free();
  }
}

// Runs `op` as the connection does; returns the trace of its steps.
async function run(engine, store, op, step) {
  const commits = [...(step.commits ?? [])];
  const trace = [];
  try {
    let s = op.begin(engine, Boolean(step.busy), Boolean(step.readOnly));
    while (!('done' in s)) {
      let answer;
      if ('refresh' in s) {
        trace.push(s.refresh.unlessBusy ? 'refresh?' : 'refresh');
        try {
          await drive(engine, store, engine.refresh());
          answer = { refreshed: true };
        } catch (error) {
          answer = { refreshError: error };
        }
      } else if ('now' in s) {
        trace.push('now');
        answer = { now: { commitTime: script.commitTime, millis: 0 } };
      } else if ('read' in s) {
        trace.push('read');
        try {
          answer = { read: { value: engine.manifest(undefined, '2026-05-01') } };
        } catch (error) {
          answer = { read: { error } };
        }
      } else if (s.need === 'commit') {
        const how = commits.shift() ?? 'store';
        trace.push(`commit:${how}`);
        if (how === 'store') answer = await serveNeed(store, s);
        else if (how === 'conflict') answer = { outcome: 'conflict' };
        else if (how === 'indeterminate') answer = { outcome: 'indeterminate' };
        else {
          const e = op.abandon(engine, new Error('the host lost the step'));
          trace.push(`done:${e.code}:${e.message}`);
          return trace.join(' ');
        }
      } else {
        answer = await serveNeed(store, s);
      }
      s = op.resume(engine, answer);
    }
    trace.push('done:ok');
  } catch (e) {
    trace.push(`done:${e.code}:${e.message}`);
  } finally {
    op.free();
  }
  return trace.join(' ');
}

async function headRevision(engine, store) {
  const op = engine.history({ limit: 1 });
  let s = op.begin(engine, false, false);
  while (!('done' in s)) {
    if ('refresh' in s) {
      await drive(engine, store, engine.refresh());
      s = op.resume(engine, { refreshed: true });
    } else s = op.resume(engine, await serveNeed(store, s));
  }
  op.free();
  return s.done.revisions[0]?.revision;
}

test('the policy script takes the native decisions through the bindings', async () => {
  const store = await memory().open(script.tenant);
  const engine = new WasmEngine(script.tenant);
  await drive(engine, store, engine.refresh());
  for (const [i, step] of script.ops.entries()) {
    let op;
    switch (step.do) {
      case 'read':
        op = engine.readOp(undefined);
        break;
      case 'write':
        op = engine.write('notes', step.path, script.doc, undefined);
        break;
      case 'transact': {
        const request = { changes: [{ operation: 'write', bundle: 'notes', path: step.path, content: script.doc }] };
        if (step.expected) request.expectedRevision = await headRevision(engine, store);
        op = engine.transact(request);
        break;
      }
      case 'history':
        op = engine.history({});
        break;
      case 'gc':
        op = engine.gc({ dryRun: Boolean(step.dryRun) });
        break;
      case 'verify':
        op = engine.verify();
        break;
      default:
        throw new Error(`unknown op ${step.do}`);
    }
    const trace = await run(engine, store, op, step);
    assert.ok(trace === step.expect || trace.startsWith(`${step.expect}:`), `op ${i} ${JSON.stringify(step)}\n got: ${trace}`);
  }
  assert.ok((await store.readHead()) !== null);
  engine.free();
});

test('the derived timer script takes the native decisions through the bindings', () => {
  assert.equal(derivedDelayMs(), script.delayMs);
  let timer = new WasmDerivedTimer(false);
  for (const [i, [call, ...a]] of script.timer.entries()) {
    const at = (v) => (v === undefined ? null : v);
    switch (call) {
      case 'new':
        timer.free();
        timer = new WasmDerivedTimer(a[0]);
        break;
      case 'afterOp':
        assert.equal(at(timer.afterOp(a[0], a[1], a[2])), a[3], `call ${i}`);
        break;
      case 'fire':
        assert.equal(timer.fire(a[0]), a[1], `call ${i}`);
        break;
      case 'deadline':
        assert.equal(at(timer.deadline), a[0], `call ${i}`);
        break;
      case 'close':
        assert.equal(timer.close(), a[0], `call ${i}`);
        break;
      default:
        throw new Error(`unknown timer call ${call}`);
    }
  }
  timer.free();
});
