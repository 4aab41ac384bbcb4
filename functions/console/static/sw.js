// The console's service worker: it keeps the application shell and its static assets (the files
// /console/ serves) for when the network is gone, and nothing else. A request outside /console/
// (every API answer: page content, the session, status) is never seen here, so it is never cached:
// reading pages needs the hub, as seed 001 says. Network first, so a deploy is seen at once.
// docs/console.md, The service worker.
const CACHE = "console-shell-v1";
const SCOPE = new URL(self.registration.scope).pathname; // "/console/"

self.addEventListener("install", () => self.skipWaiting());

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

function isShell(request) {
  const url = new URL(request.url);
  return request.method === "GET" && url.origin === self.location.origin && url.pathname.startsWith(SCOPE) && !url.search;
}

self.addEventListener("fetch", (event) => {
  if (!isShell(event.request)) return; // the browser fetches it as if there were no worker
  event.respondWith(
    fetch(event.request).then(
      (response) => {
        if (response.ok && response.type === "basic") {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(event.request, copy)));
        }
        return response;
      },
      () => caches.match(event.request).then((kept) => kept ?? Response.error()),
    ),
  );
});
