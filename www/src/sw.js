// The notes page's service worker: precaches every built file at install, so the page opens
// and runs offline once it has loaded one time. The build (vite.config.ts) fills in VERSION
// (a digest of the built files) and FILES (their names, relative to this script).
//
// Navigations go to the network first, so a new build is picked up when online, and fall
// back to the cached page offline. Everything else is served from the cache first: the built
// assets carry a content hash in their names, so a cached copy is never out of date.

const VERSION = '__VERSION__';
const FILES = [/* __FILES__ */];
const CACHE = `langonrock-notes-${VERSION}`;
const PREFIX = 'langonrock-notes-';

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(['./', ...FILES.filter((f) => f !== 'index.html')]);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith(PREFIX) && key !== CACHE) await caches.delete(key);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate') {
    event.respondWith(
      (async () => {
        const cache = await caches.open(CACHE);
        try {
          const response = await fetch(request);
          if (response.ok) await cache.put('./', response.clone());
          return response;
        } catch (error) {
          const cached = await cache.match('./');
          if (cached) return cached;
          throw error;
        }
      })(),
    );
    return;
  }
  event.respondWith(
    (async () => {
      const cached = await caches.match(request, { ignoreSearch: true });
      return cached ?? fetch(request);
    })(),
  );
});
