// Helpers to run the native binary (`target/debug/langonrock`, or $LANGONROCK_BIN) and the
// package's bin next to each other: CLI commands, and MCP sessions over stdio.

import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const pkgDir = fileURLToPath(new URL('..', import.meta.url));
export const repoDir = fileURLToPath(new URL('../..', import.meta.url));
export const NATIVE = process.env.LANGONROCK_BIN ?? `${repoDir}target/debug/langonrock`;
export const JS_BIN = `${pkgDir}bin/langonrock.js`;
export const SAMPLES = `${repoDir}tests/data/okf-samples`;

export function requireNative() {
  if (!existsSync(NATIVE)) throw new Error(`no native binary at ${NATIVE}: run cargo build -p langonrock-node-mcp`);
}

/** Runs the native CLI; resolves `{code, stdout, stderr}` whatever the exit code. */
export async function cli(args, { today, input } = {}) {
  const env = { ...process.env, ...(today ? { LANGONROCK_TODAY: today } : {}) };
  return new Promise((resolve, reject) => {
    const child = execFile(NATIVE, args, { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // the binary may exit without reading stdin
    child.stdin.end(input ?? '');
  });
}

/**
 * One MCP session over stdio: `command` is `[program, ...args]`; `requests` are sent after
 * `initialize`, then stdin is closed; `env` adds variables. Resolves `{byId, stderr, code}`.
 */
export function mcpSession(command, requests, { today, env: extra } = {}) {
  const env = { ...process.env, ...(today ? { LANGONROCK_TODAY: today } : {}), ...extra };
  const [program, ...args] = command;
  const child = spawn(program, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    ...requests.map((r, i) => ({ jsonrpc: '2.0', id: i + 1, ...r })),
  ];
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  child.stdin.on('error', () => undefined);
  child.stdin.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`MCP session timed out; stderr: ${stderr}`));
    }, 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const byId = new Map();
      for (const line of stdout.split('\n')) {
        if (!line.trim()) continue;
        const msg = JSON.parse(line);
        if (msg.id !== undefined) byId.set(msg.id, msg);
      }
      resolve({ byId, stderr, code });
    });
  });
}

/** The text and isError of a tools/call answer. */
export function toolText(msg) {
  if (!msg?.result) throw new Error(`no result: ${JSON.stringify(msg)}`);
  return { text: msg.result.content.map((c) => c.text).join(''), isError: Boolean(msg.result.isError) };
}

export { run };
