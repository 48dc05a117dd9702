// Builds the notes page into dist/: the app (src/main.ts), its engine worker
// (src/engine/worker.ts, an ES module worker) with the langonrock package linked from ../pkg
// (its browser entry fetches the .wasm next to it; the MCP SDK it loads only for
// createMcpServer stays out), and a service worker (src/sw.js) that precaches every built
// file so the page works offline once loaded.

import { defineConfig, type Plugin } from 'vite';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

function serviceWorker(): Plugin {
  return {
    name: 'notes-service-worker',
    apply: 'build',
    enforce: 'post',
    generateBundle(_options, bundle) {
      const files = Object.keys(bundle)
        .filter((f) => !f.endsWith('.map') && f !== 'sw.js')
        .sort();
      const digest = createHash('sha256');
      for (const f of files) {
        const item = bundle[f];
        digest.update(f + '\0');
        digest.update(item.type === 'chunk' ? item.code : item.source);
      }
      const version = digest.digest('hex').slice(0, 16);
      const source = readFileSync(new URL('./src/sw.js', import.meta.url), 'utf8')
        .replace("'__VERSION__'", JSON.stringify(version))
        .replace('[/* __FILES__ */]', JSON.stringify(files));
      this.emitFile({ type: 'asset', fileName: 'sw.js', source });
    },
  };
}

export default defineConfig({
  base: './',
  build: {
    target: 'es2022',
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 2048,
    // The package loads the MCP SDK only inside createMcpServer (js.md §6), which a page
    // never calls: leave it out of the bundle.
    rolldownOptions: { external: [/^@modelcontextprotocol\/sdk(\/|$)/] },
  },
  worker: {
    format: 'es',
    rolldownOptions: { external: [/^@modelcontextprotocol\/sdk(\/|$)/] },
  },
  optimizeDeps: { exclude: ['langonrock'] },
  server: { fs: { allow: ['..'] } },
  plugins: [serviceWorker()],
});
