"use strict";
// leashd's service worker: it shows the pushes leashd sends when the agent
// needs you and no page of that chat is open, and a tap opens the page at
// the question. It caches nothing: the page needs leashd to be useful.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", e => e.waitUntil(self.clients.claim()));

self.addEventListener("push", e => {
  let msg = {};
  try { msg = e.data ? e.data.json() : {}; } catch { msg = { body: e.data ? e.data.text() : "" }; }
  const title = msg.title || "leashd";
  e.waitUntil(self.registration.showNotification(title, {
    body: msg.body || "The agent needs you.",
    tag: msg.tag || "leashd",
    icon: "/icon-192.png",
    badge: "/icon-192.png",
    requireInteraction: !!msg.urgent,
    data: { url: msg.url || "/" },
  }));
});

self.addEventListener("notificationclick", e => {
  e.notification.close();
  const path = (e.notification.data && e.notification.data.url) || "/";
  const url = new URL(path, self.location.origin);
  if (url.origin !== self.location.origin) return; // only leashd's own page
  e.waitUntil((async () => {
    const wins = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    for (const w of wins) {
      if (new URL(w.url).origin === url.origin && "focus" in w) {
        await w.navigate(url.href).catch(() => {});
        return w.focus();
      }
    }
    return self.clients.openWindow(url.href);
  })());
});
