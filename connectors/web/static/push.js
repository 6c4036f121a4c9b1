"use strict";
// The page as an installable app, and push notifications: the service
// worker (/sw.js) shows a push when a chat needs you and no page of it is
// on screen. The page tells leashd which chat it shows and whether it is
// visible, so a chat you are looking at sends no push.

const pushState = { client: (self.crypto && crypto.randomUUID) ? crypto.randomUUID() : Math.random().toString(36).slice(2), key: "" };

// b64bytes decodes base64url (the VAPID key) for PushManager.subscribe.
function b64bytes(s) {
  const b = atob((s + "=".repeat((4 - s.length % 4) % 4)).replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(b, c => c.charCodeAt(0));
}

// reportPresence says which chat this page shows and whether a person can
// see it. keepalive: it still goes when the page is being closed.
function reportPresence(visible) {
  const body = { client: pushState.client, chat_id: state.chat, visible: visible === undefined ? document.visibilityState === "visible" : visible };
  return fetch("/api/presence", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin", keepalive: true }).catch(() => {});
}

async function setupPush() {
  document.addEventListener("visibilitychange", () => reportPresence());
  document.addEventListener("leashd:chat", () => reportPresence());
  window.addEventListener("pagehide", () => reportPresence(false));
  // leashd forgets a page it has not heard from in 75 s: a phone that
  // closed the tab says nothing.
  setInterval(() => { if (document.visibilityState === "visible") reportPresence(); }, 30000);
  reportPresence();
  if (!("serviceWorker" in navigator)) return;
  try { await navigator.serviceWorker.register("/sw.js", { scope: "/" }); } catch { return; }
  let info;
  try { info = await fetch("/api/push", { credentials: "same-origin" }).then(r => r.ok ? r.json() : {}); } catch { return; }
  if (!info.enabled || !("PushManager" in window)) return;
  pushState.key = info.public_key;
  $("#pushbar").hidden = false;
  $("#notify").addEventListener("click", subscribePush);
}

// subscribePush asks the browser for a push subscription (it asks the
// person for permission) and gives it to leashd for the chat shown.
async function subscribePush() {
  const btn = $("#notify");
  btn.disabled = true;
  try {
    if (!("Notification" in window)) throw new Error("This browser shows no notifications here; on an iPhone, add the page to the Home Screen first.");
    if (Notification.permission !== "granted" && (await Notification.requestPermission()) !== "granted") {
      throw new Error("Notifications are blocked for this page: allow them in the browser's site settings.");
    }
    const reg = await navigator.serviceWorker.ready;
    let sub = await reg.pushManager.getSubscription();
    if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64bytes(pushState.key) });
    await api("POST", "/api/push/subscriptions", { chat_id: state.chat, subscription: sub.toJSON() });
    btn.textContent = "Notifications on";
    $("#pushnote").textContent = "A push comes when this chat needs you and it is not on screen.";
  } catch (e) {
    toast(e.message || String(e));
    btn.disabled = false;
  }
}
// showAsked scrolls to the question a push linked to (#i-<id>) once its
// card is on the page.
function showAsked() {
  if (!location.hash.startsWith("#i-")) return;
  const id = decodeURIComponent(location.hash.slice(3));
  const started = Date.now();
  const t = setInterval(() => {
    const card = document.querySelector('.card[data-id="' + CSS.escape(id) + '"]');
    if (card) card.scrollIntoView({ block: "center" });
    if (card || Date.now() - started > 15000) clearInterval(t);
  }, 200);
}
setupPush();
showAsked();
