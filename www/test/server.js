// A small static file server for the end-to-end tests and `scripts/www-serve.sh`: serves the
// built page (www/dist) on 127.0.0.1, `/` as index.html, with the MIME types ES modules,
// WebAssembly and the service worker need. GET and HEAD only; no path leaves the root.

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Serves `root`; resolves `{url, close}` once listening on `port` (0: a free one) of 127.0.0.1. */
export function serve(root, port = 0) {
  const base = normalize(root + sep);
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
      return;
    }
    let path;
    try {
      let pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (pathname.endsWith('/')) pathname += 'index.html';
      path = normalize(join(base, pathname));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!path.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(path);
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }) });
    });
  });
}

// `node test/server.js [port]` serves www/dist until stopped.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('../dist/', import.meta.url).pathname;
  const site = await serve(root, Number(process.argv[2] ?? 5173));
  console.log(`langonrock notes: ${site.url}/`);
}
