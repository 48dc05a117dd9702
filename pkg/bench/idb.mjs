// Runs bench/idb.html in headless Chromium (Debian's, through playwright-core) with a corpus
// folder read in Node, and prints the figures as JSON. Usage: node bench/idb.mjs <dir>

import { chromium } from 'playwright-core';
import { fileURLToPath } from 'node:url';
import { serve } from '../test/browser/server.js';
import { readFolder } from '../src/folder.js';
import 'langonrock';

const dir = process.argv[2];
const root = fileURLToPath(new URL('..', import.meta.url));
const docs = (await readFolder(dir)).docs.map(({ bundle, path, content }) => ({ bundle, path, content }));
const server = await serve(root);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
});
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}/bench/idb.html`);
  await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30_000 });
  const r = await page.evaluate((d) => window.bench(d), docs);
  console.log(JSON.stringify(r));
} finally {
  await browser.close();
  await server.close();
}
