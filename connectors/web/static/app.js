"use strict";
const $ = (s, el = document) => el.querySelector(s);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
};
const esc = s => String(s).replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c]));

// Markdown: headings, lists, fenced code, inline code, bold, italic, links.
// Everything is escaped first; only these constructs become HTML.
function inline(s) {
  const parts = s.split(/(`[^`]+`)/g);
  return parts.map(p => {
    if (p.length > 1 && p.startsWith("`") && p.endsWith("`")) return "<code>" + esc(p.slice(1, -1)) + "</code>";
    let h = esc(p);
    h = h.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>").replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
    h = h.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (m, t, u) => '<a href="' + u + '" target="_blank" rel="noopener noreferrer">' + t + "</a>");
    return h;
  }).join("");
}
function markdown(src) {
  const lines = String(src).replace(/\r\n/g, "\n").split("\n");
  let out = "", list = null, para = [];
  const flushPara = () => { if (para.length) { out += "<p>" + para.map(inline).join("<br>") + "</p>"; para = []; } };
  const closeList = () => { if (list) { out += "</" + list + ">"; list = null; } };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const fence = l.match(/^\s*```\s*([\w+-]*)\s*$/);
    if (fence) {
      flushPara(); closeList();
      const code = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      out += "<pre><code>" + esc(code.join("\n")) + "</code></pre>";
      continue;
    }
    let m;
    if ((m = l.match(/^(#{1,6})\s+(.*)$/))) { flushPara(); closeList(); const n = Math.min(m[1].length + 2, 6); out += "<h" + n + ">" + inline(m[2]) + "</h" + n + ">"; continue; }
    if ((m = l.match(/^\s*[-*+]\s+(.*)$/)) || (m = l.match(/^\s*\d+[.)]\s+(.*)$/))) {
      flushPara();
      const kind = /^\s*\d/.test(l) ? "ol" : "ul";
      if (list !== kind) { closeList(); out += "<" + kind + ">"; list = kind; }
      out += "<li>" + inline(m[1]) + "</li>";
      continue;
    }
    if (l.trim() === "") { flushPara(); closeList(); continue; }
    closeList(); para.push(l);
  }
  flushPara(); closeList();
  return out;
}

const state = {
  // ?chat= (a push's link) opens that chat.
  chat: new URLSearchParams(location.search).get("chat") || localStorage.getItem("leashd.chat") || ("web-" + Math.random().toString(36).slice(2, 8)),
  // The chats this browser started (its own, and New): "This browser".
  mine: (() => { try { return JSON.parse(localStorage.getItem("leashd.mine")) || []; } catch { return []; } })(),
  // Names the person gave chats: chat id → name.
  names: (() => { try { return JSON.parse(localStorage.getItem("leashd.names")) || {}; } catch { return {}; } })(),
  chats: new Map(),       // chat id → {box, unread, title}
  msgs: new Map(),        // message id → element
  cards: new Map(),       // interaction id → {card, it}
  resolved: new Map(),    // interaction id → resolved event seen before its card
  queues: new Map(),      // interaction id → its last request (act)
  lastId: "0",
  es: null,
};
localStorage.setItem("leashd.chat", state.chat);
function remember(id) {
  if (state.mine.includes(id)) return;
  state.mine.push(id); localStorage.setItem("leashd.mine", JSON.stringify(state.mine.slice(-50)));
}
remember(state.chat);

// ---- words people read ----
// chatTitle names a chat by where it is: the chat app, the Slack channel,
// "This browser" for this page's own chats; never a raw ID such as
// "web-0enymt" or "telegram:42". Equal names are numbered.
const appNames = { telegram: "Telegram", slack: "Slack", terminal: "Terminal" };
function chatTitle(id) {
  const i = id.indexOf(":"), app = i > 0 ? id.slice(0, i) : "", rest = i > 0 ? id.slice(i + 1) : "";
  if (app === "telegram") return rest.startsWith("-") ? "Telegram group" : "Telegram";
  if (app === "slack") {
    const [channel, thread] = rest.split(":");
    if (/^D/.test(channel)) return "Slack direct message";
    return "Slack #" + channel + (thread ? " thread" : "");
  }
  if (appNames[app]) return appNames[app];
  if (state.mine.includes(id)) return "This browser";
  if (/^web-[a-z0-9]+$/.test(id)) return "Another browser";
  return id; // named by a program that asks through the API
}
// chatName is what the picker calls a chat: the name the person gave it,
// else for a browser's chat its first message, else where it is (a chat
// app's chat: the app; the page never sees what was said there first).
const short = s => { const l = String(s).trim().split("\n")[0].trim(); return l.length > 32 ? l.slice(0, 31).trimEnd() + "…" : l; };
function chatName(id, c) {
  if (state.names[id]) return state.names[id];
  const browser = state.mine.includes(id) || /^web-[a-z0-9]+$/.test(id);
  return browser && c.first ? short(c.first) : chatTitle(id);
}
// noteFirst keeps a chat's first message, which names it.
function noteFirst(chat, text) { const c = chatBox(chat); if (!c.first && text && String(text).trim()) c.first = String(text); }
// who answered: "you" from this page (the web user), else the chat app's name for the person.
const who = by => !by ? "" : by === "web" ? "you" : by;
// when: a time people read (with the date when not today); the full date
// on hover. The server says when (a replay after a reload keeps the times).
function stamp(at) {
  const d = new Date(at || NaN);
  if (isNaN(d) || d.getFullYear() < 2000) return null;
  const today = new Date().toDateString() === d.toDateString();
  const text = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return el("time", { class: "ts", datetime: d.toISOString(), title: d.toLocaleString(), text: today ? text : d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + text });
}

function toast(msg) {
  const t = $("#toast"); t.textContent = msg; t.style.display = "block";
  clearTimeout(toast.timer); toast.timer = setTimeout(() => t.style.display = "none", 4000);
}

async function api(method, path, body) {
  const opt = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) { opt.headers["Content-Type"] = "application/json"; opt.body = JSON.stringify(body); }
  const r = await fetch(path, opt);
  let data = null;
  const ct = r.headers.get("Content-Type") || "";
  if (ct.includes("json")) data = await r.json().catch(() => null);
  if (r.status === 401) showLogin();
  if (!r.ok) { const err = new Error((data && data.error) || (r.status + " " + r.statusText)); err.status = r.status; throw err; }
  return data;
}

function chatBox(id) {
  let c = state.chats.get(id);
  if (!c) {
    const box = el("div", { class: "chat", "data-chat": id });
    box.hidden = id !== state.chat;
    $("#log").append(box);
    c = { box, unread: 0, first: "" };
    state.chats.set(id, c);
    renderChatList();
  }
  return c;
}
// renderChatList lists the chats by name (equal names numbered), each
// with how many requests wait in it ("· 1 waiting") and what is unread.
function renderChatList() {
  const waiting = new Map();
  for (const c of state.cards.values()) {
    const chat = c.card.getAttribute("data-chat");
    if (c.card.isConnected && $(".actions", c.card)) waiting.set(chat, (waiting.get(chat) || 0) + 1);
  }
  const seen = new Map(), items = [];
  for (const [id, c] of state.chats) {
    const base = chatName(id, c), n = (seen.get(base) || 0) + 1;
    seen.set(base, n);
    const w = waiting.get(id) || 0;
    items.push([id, (n > 1 ? base + " " + n : base) + (w ? " · " + w + " waiting" : "") + (c.unread ? " (" + c.unread + ")" : "")]);
  }
  const key = JSON.stringify([state.chat, items]);
  if (key === renderChatList.key) return; // unchanged: an open picker stays open
  renderChatList.key = key;
  const sel = $("#chats"); sel.textContent = "";
  for (const [id, label] of items) {
    const o = el("option", { value: id, text: label }); if (id === state.chat) o.selected = true;
    sel.append(o);
  }
}
// rename lets the person name the chat shown (an empty name: named by its
// first message again).
function rename() {
  const name = prompt("Name this chat", state.names[state.chat] || chatName(state.chat, chatBox(state.chat)));
  if (name === null) return;
  if (name.trim()) state.names[state.chat] = name.trim().slice(0, 60); else delete state.names[state.chat];
  localStorage.setItem("leashd.names", JSON.stringify(state.names));
  renderChatList();
}
function switchChat(id) {
  state.chat = id; localStorage.setItem("leashd.chat", id);
  chatBox(id);
  for (const [cid, c] of state.chats) { c.box.hidden = cid !== id; if (cid === id) c.unread = 0; }
  const box = state.chats.get(id).box;
  if (!box.firstChild) box.append(el("p", { class: "empty", text: "Send a message to start. /help lists the commands." }));
  renderChatList(); scrollDown(true);
  document.dispatchEvent(new CustomEvent("leashd:chat", { detail: id })); // push.js: what this page shows
}
// atBottom: the reader is following the conversation (checked before
// adding, so a tall card does not stop the following).
function atBottom() { const log = $("#log"); return log.scrollHeight - log.scrollTop - log.clientHeight < 160; }
function scrollDown(force) { if (force || atBottom()) $("#log").scrollTop = $("#log").scrollHeight; }
function add(chat, node) {
  const c = chatBox(chat);
  const follow = atBottom();
  const empty = $(".empty", c.box); if (empty) empty.remove();
  c.box.append(node);
  if (chat !== state.chat) { c.unread++; renderChatList(); }
  scrollDown(follow);
}

// ---- interaction cards ----
const kindTitle = { question: "Question", plan_review: "Plan review", tool_approval: "Tool approval" };
// Tool decisions have the terminal's colours: allow green, deny red.
const decisionClass = { allow: "good", allow_session: "good-outline", deny: "danger" };
// An option's style colours its button: what lets something happen
// green, what refuses or destroys red.
const styleClass = { approve: "good", deny: "danger", destructive: "danger" };
// isApproval: a request whose options carry styles (a tool approval, a
// program's yes/no approval, an agent's own permission options, /discard)
// is shown as an approval: coloured buttons and a reason field, no
// "Other" answer and no separate Decline.
const isApproval = it => it.kind === "tool_approval" || it.approval || (!it.multi_select && it.kind !== "plan_review" && (it.options || []).some(o => o.style));
// styleOf: options without a style (asked before options had styles, or
// by a leashd that sets none) get the style of what they mean: a tool
// decision's, or a yes/no approval's (the first approves, the second
// refuses).
const toolStyle = { allow: "approve", allow_session: "approve", deny: "deny" };
const styleOf = (it, o) => o.style || (it.kind === "tool_approval" ? toolStyle[o.label] || "" :
  it.approval ? (it.options.indexOf(o) === 0 ? "approve" : "deny") : "");
const optionOf = (it, label) => (it.options || []).find(o => o.label === label);

// act sends a tap or typed text. A card's requests go one after another
// in the order tapped and its buttons stay enabled meanwhile: on a slow
// network a tap (Done right after a toggle) waits for the one before it
// instead of being dropped. Once an answer is sent, later taps on that
// card are not sent (the card closes when its outcome arrives).
function act(id, path, body) {
  const run = async () => {
    const c = state.cards.get(id);
    if (c && c.sent) { toast("Already answered: waiting for the outcome."); return null; }
    if (c) c.card.setAttribute("aria-busy", "true");
    try {
      const r = await api("POST", "/api/interactions/" + encodeURIComponent(id) + "/" + path, body);
      // 204: answered. 202 (awaiting feedback, an approval counted towards
      // a quorum) leaves it open: the person may still say more or refuse.
      if (c && path !== "toggle" && r == null) c.sent = true;
      return r;
    } catch (e) {
      toast(e.message);
      // Gone (answered elsewhere, expired, cancelled): no buttons for it.
      if (e.status === 404 || e.status === 409) closeCard(id, { status: "stale", text: e.message });
      throw e;
    } finally { if (c) c.card.removeAttribute("aria-busy"); }
  };
  const p = (state.queues.get(id) || Promise.resolve()).then(run);
  state.queues.set(id, p.catch(() => {}));
  return p;
}

function textRow(placeholder, label, onsend) {
  const input = el("input", { type: "text", placeholder });
  const send = () => { const v = input.value.trim(); if (v) onsend(v, input); };
  input.addEventListener("keydown", e => { if (e.key === "Enter") { e.preventDefault(); send(); } });
  return el("div", { class: "row" }, input, el("button", { type: "button", class: "primary", onclick: send, text: label }));
}

// splitAsk parts what a program asks into the action (its first line) and
// the details (the rest): request_approval sends "action\n\ndetails".
function splitAsk(text) {
  const s = String(text || "").replace(/\r\n/g, "\n").trim(), i = s.indexOf("\n");
  return i < 0 ? [s, ""] : [s.slice(0, i).trim(), s.slice(i + 1).trim()];
}

function cardHead(it) {
  let head = kindTitle[it.kind] || it.kind;
  if (it.kind === "question") {
    if (isApproval(it)) head = "Approval";
    if (it.header && it.header !== head) head += " · " + it.header;
    if (it.total > 1) head += " · " + it.index + " of " + it.total;
  }
  return el("div", { class: "head" }, head, stamp(it.asked_at));
}

function cardBody(it, card) {
  if (it.kind === "question") {
    const [action, details] = splitAsk(it.question);
    card.append(el("div", { class: "q", text: action }));
    if (details) card.append(el("div", { class: "details", text: details }));
    if (it.multi_select) card.append(el("div", { class: "hint", text: "Choose one or more, then Done." }));
  } else if (it.kind === "plan_review") {
    const p = el("div", { class: "plan" }); p.innerHTML = markdown(it.plan || ""); card.append(p);
  } else {
    card.append(el("div", { class: "q", text: it.tool_action }));
    // The MCP server, why the agent asks, what the options mean.
    for (const n of it.notes || []) card.append(el("div", { class: "hint note", text: n }));
    // The command, or the file and its change with + and - lines marked;
    // the whole input when the request must be read in full.
    if (it.diff && !it.requires_details) { card.append(diffView(it.diff)); return; }
    const pre = el("pre", { class: "tool" });
    const shown = it.requires_details && it.tool_input ? JSON.stringify(it.tool_input, null, 2) : it.tool_summary || JSON.stringify(it.tool_input, null, 2);
    for (const line of String(shown).split("\n")) {
      if (pre.childNodes.length) pre.append("\n");
      pre.append(el("span", { class: line.startsWith("+ ") ? "add" : line.startsWith("- ") ? "del" : "", text: line }));
    }
    card.append(pre);
  }
}

// diffView shows a unified diff: each line coloured by its kind, with its
// line numbers in the old and the new file, counted from the hunk headers.
function diffView(diff) {
  const box = el("div", { class: "diff", role: "table", "aria-label": "Changes" });
  let oldN = 0, newN = 0;
  for (const line of String(diff).replace(/\n$/, "").split("\n")) {
    let kind = "note", o = "", n = "";
    if (line.startsWith("--- ") || line.startsWith("+++ ")) kind = "file";
    else if (line.startsWith("@@ ")) {
      kind = "hunk";
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(line);
      if (m) { oldN = Math.max(1, +m[1]); newN = Math.max(1, +m[2]); }
    } else if (line.startsWith("+")) { kind = "add"; n = newN++; }
    else if (line.startsWith("-")) { kind = "del"; o = oldN++; }
    else if (line.startsWith(" ")) { kind = "ctx"; o = oldN++; n = newN++; }
    box.append(el("div", { class: "dl " + kind, role: "row" },
      el("span", { class: "ln", text: String(o) }), el("span", { class: "ln", text: String(n) }), el("span", { class: "code", text: line })));
  }
  return box;
}

// optionButton is one option's button; a tap answers with it.
function optionButton(it, i) {
  const id = it.interaction_id, o = it.options[i], texts = it.option_texts || [];
  const cls = (it.kind === "tool_approval" && decisionClass[o.label]) || styleClass[styleOf(it, o)] || "";
  const b = el("button", { type: "button", class: "option" + (cls ? " " + cls : ""), "data-label": o.label, title: o.description || "" },
    el("span", { text: texts[i] || o.label }), it.kind === "question" && o.description && !styleOf(it, o) ? el("span", { class: "desc", text: o.description }) : null);
  b.addEventListener("click", () => act(id, "reply", { answers: [[o.label]] }).then(r => { if (r && r.awaiting_feedback) showFeedback(id); }).catch(() => {}));
  return b;
}

// approvalActions: each option a button coloured by its style; the first
// refusing option sits beside a reason field, and typed text refuses with
// it as the reason (as every connector takes typed text on an approval).
function approvalActions(it, actions) {
  const id = it.interaction_id, opts = it.options, texts = it.option_texts || [];
  const deny = opts.findIndex(o => styleOf(it, o) === "deny");
  for (let i = 0; i < opts.length; i++) if (i !== deny) actions.append(optionButton(it, i));
  if (deny < 0) return;
  const o = opts[deny];
  const input = el("input", { type: "text", placeholder: "Reason (optional)", "aria-label": "Reason" });
  const doDeny = () => { const why = input.value.trim(); act(id, "reply", why ? { text: why } : { answers: [[o.label]] }).catch(() => {}); };
  input.addEventListener("keydown", e => { if (e.key === "Enter") { e.preventDefault(); doDeny(); } });
  const row = el("div", { class: "row" }, input, el("button", { type: "button", class: "option danger", "data-label": o.label, text: texts[deny] || o.label, onclick: doDeny }));
  // Refusing first when one stray tap must not approve.
  if (it.default_to_no) actions.prepend(row); else actions.append(row);
}

function cardActions(it) {
  const id = it.interaction_id, actions = el("div", { class: "actions" });
  const opts = it.options || [], texts = it.option_texts || [];
  if (isApproval(it)) { approvalActions(it, actions); return actions; }
  if (it.kind === "question" && it.multi_select) {
    const selected = new Set(it.selected || []);
    for (let i = 0; i < opts.length; i++) {
      const o = opts[i];
      const b = el("button", { type: "button", class: "toggle" + (selected.has(o.label) ? " on" : ""), "data-label": o.label, "aria-pressed": String(selected.has(o.label)) },
        el("span", { class: "check", "aria-hidden": "true", text: "✓" }), el("span", { text: texts[i] || o.label }), o.description ? el("span", { class: "desc", text: o.description }) : null);
      b.addEventListener("click", () => act(id, "toggle", { label: o.label }).then(r => { if (r) setSelected(id, r.selected); }).catch(() => {}));
      actions.append(b);
    }
    actions.append(el("button", { type: "button", class: "primary confirm", text: "Done", onclick: () => act(id, "confirm").catch(() => {}) }));
  } else {
    for (let i = 0; i < opts.length; i++) actions.append(optionButton(it, i));
  }
  if (it.kind === "question") {
    actions.append(textRow("Other: type your answer", "Send", v => act(id, "reply", { text: v }).catch(() => {})));
    actions.append(el("button", { type: "button", class: "reject", text: "Decline", onclick: () => act(id, "reject", {}).catch(() => {}) }));
  }
  return actions;
}

function renderCard(it) {
  const id = it.interaction_id;
  const card = el("div", { class: "card" + (isApproval(it) ? " approval" : ""), "data-id": id, "data-kind": it.kind, "data-chat": it.chat_id });
  card.append(cardHead(it));
  cardBody(it, card);
  if (it.quorum_text) card.append(el("div", { class: "hint quorum", text: it.quorum_text }));
  if (it.interrupted) card.append(el("div", { class: "notice", text: it.notice || "leashd restarted while this was waiting; you can still answer." }));
  card.append(cardActions(it));
  state.cards.set(id, { card, it });
  if (it.multi_select) setSelected(id, it.selected);
  if (it.awaiting_feedback) showFeedback(id);
  return card;
}

// setQuorum shows the approvals so far of one that needs several
// approvers ("1 of 2 approvals — U1"); the buttons stay.
function setQuorum(id, text) {
  const c = state.cards.get(id); if (!c) return;
  let q = $(".quorum", c.card);
  if (!q) { q = el("div", { class: "hint quorum" }); $(".actions", c.card).before(q); }
  q.textContent = text;
}

function setSelected(id, selected) {
  const c = state.cards.get(id); if (!c) return;
  const s = new Set(selected || []);
  c.card.querySelectorAll("button.toggle").forEach(b => {
    const on = s.has(b.getAttribute("data-label"));
    b.classList.toggle("on", on); b.setAttribute("aria-pressed", String(on));
  });
  const done = $("button.confirm", c.card);
  if (done) done.textContent = s.size ? "Done (" + s.size + " selected)" : "Done";
}

function showFeedback(id) {
  const c = state.cards.get(id); if (!c || $(".feedback", c.card)) return;
  const actions = $(".actions", c.card); if (!actions) return;
  const row = textRow("What should change?", "Send feedback", v => act(id, "reply", { answers: [["adjust"]], text: v }).catch(() => {}));
  row.classList.add("feedback"); actions.append(row); $("input", row).focus();
}

// What happened to a request, in the words people use (the decisions'
// keys such as clean_edit never show).
const outcomeWords = {
  clean_edit: "Approved — clear context", edit: "Approved — auto-accept edits", default: "Approved — review edits",
  allow: "Allowed", allow_session: "Allowed for this session",
  adjust: "Changes asked for", deny: "Denied", reject: "Declined",
};
function describeOutcome(ev, it) {
  const by = who(ev.by), tail = by ? " · by " + by : "";
  const said = (words, text) => (text ? words + ": " + text : words) + tail;
  if (it && isApproval(it) && (ev.status === "answered" || ev.status === "rejected")) return approvalOutcome(ev, it, said);
  switch (ev.status) {
    case "answered":
      if (ev.kind === "question") return ["ok", said("Answered", ev.answer)];
      return ["ok", said(outcomeWords[ev.decision] || "Approved")];
    case "rejected": return ["bad", said(outcomeWords[ev.decision] || "Declined", ev.text)];
    case "expired": return ["bad", "Expired: " + (ev.text || "no answer in time")];
    case "cancelled": return ["bad", ev.text ? "Cancelled: " + ev.text : "Cancelled"];
    case "interrupted": return ["bad", ev.text ? "Interrupted: " + ev.text : "Interrupted"];
    case "stale": return ["bad", ev.text];
  }
  return ["bad", ev.status];
}

// approvalOutcome: a refusal is "Denied" in red, with the reason typed
// (a program's approval refused by its second option is told rejected,
// and so is the person); a destructive choice is red too.
function approvalOutcome(ev, it, said) {
  const label = ev.kind === "question" ? ev.answer : ev.decision, o = optionOf(it, label);
  const style = o ? styleOf(it, o) : "";
  const text = o ? (it.option_texts || [])[it.options.indexOf(o)] || o.label : "";
  if (ev.status === "rejected") return ["bad", said("Denied", ev.text === "The user rejected this request." ? "" : ev.text)];
  if (!o) return ["bad", said("Denied", ev.answer)]; // typed: the reason
  if (style === "deny") return ["bad", said("Denied", /^(deny|reject|no|abort)$/i.test(label) ? "" : text)];
  if (style === "destructive") return ["bad", said(text)];
  if (outcomeWords[label]) return ["ok", said(outcomeWords[label])];
  return ["ok", said("Approved", /^(approve|yes|allow)$/i.test(label) ? "" : text)];
}

function closeCard(id, ev) {
  const c = state.cards.get(id); if (!c) return;
  const a = $(".actions", c.card); if (a) a.remove();
  c.card.classList.add("closed");
  const old = $(".outcome", c.card);
  // A real outcome replaces a guess ("No longer pending.") made earlier.
  if (old && !(old.hasAttribute("data-stale") && ev.status !== "stale")) return;
  const [cls, text] = describeOutcome(ev, c.it);
  const out = el("div", { class: "outcome " + cls }, text, ev.status === "stale" ? null : stamp(ev.at));
  if (ev.status === "stale") out.setAttribute("data-stale", "");
  if (old) old.replaceWith(out); else c.card.append(out);
  attention();
}

// attention shows in the tab's title and icon how many requests wait for
// an answer ("(1) leashd"), so a tab in the background tells the person.
function attention() {
  renderChatList(); // its counts of what waits
  const n = [...state.cards.values()].filter(c => c.card.isConnected && $(".actions", c.card)).length;
  const title = n ? "(" + n + ") leashd" : "leashd";
  if (document.title !== title) document.title = title;
  const badge = n ? "<circle cx='24' cy='8' r='7.5' fill='%23d93025'/>" : "";
  const href = "data:image/svg+xml," + "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'><rect x='2' y='6' width='24' height='22' rx='6' fill='%232563d9'/><path d='M9 17h10M14 12v10' stroke='white' stroke-width='3' stroke-linecap='round'/>" + badge + "</svg>";
  const icon = $("#favicon"); if (icon.getAttribute("href") !== href) icon.setAttribute("href", href);
}

// ---- events ----
const handlers = {
  "message": ev => {
    const m = el("div", { class: "msg bot", "data-msg": ev.message_id }, el("div", { class: "body" }), stamp(ev.at));
    $(".body", m).innerHTML = markdown(ev.text);
    noteFirst(ev.chat_id, ev.text);
    state.msgs.set(ev.message_id, m); add(ev.chat_id, m);
  },
  "message.updated": ev => {
    const m = state.msgs.get(ev.message_id);
    if (m) { const follow = atBottom(); $(".body", m).innerHTML = markdown(ev.text); scrollDown(follow); } else handlers.message(ev);
  },
  "user.message": ev => { noteFirst(ev.chat_id, ev.text); add(ev.chat_id, el("div", { class: "msg user" }, el("div", { class: "body", text: ev.text }), stamp(ev.at))); },
  "interaction.requested": ev => {
    const old = state.cards.get(ev.interaction_id);
    if (old) {
      // A request from before a restart that can still be answered.
      if (ev.interrupted && !$(".notice", old.card)) old.card.replaceWith(renderCard(ev));
      return;
    }
    noteFirst(ev.chat_id, ev.kind === "question" ? ev.question : ev.kind === "plan_review" ? "Plan review" : ev.tool_action);
    add(ev.chat_id, renderCard(ev));
    const r = state.resolved.get(ev.interaction_id);
    if (r) closeCard(ev.interaction_id, r);
  },
  "interaction.updated": ev => {
    setSelected(ev.interaction_id, ev.selected);
    if (ev.quorum_text) setQuorum(ev.interaction_id, ev.quorum_text);
    if (ev.awaiting_feedback) showFeedback(ev.interaction_id);
  },
  "interaction.resolved": ev => {
    if (state.cards.has(ev.interaction_id)) closeCard(ev.interaction_id, ev);
    else state.resolved.set(ev.interaction_id, ev);
  },
  "turn.progress": ev => showProgress(ev.chat_id, ev.text),
  "agent.done": ev => {
    showProgress(ev.chat_id, "");
    add(ev.chat_id, el("div", { class: "done" + (ev.is_error ? " err" : "") }, ev.summary + (ev.is_error && ev.result ? " — " + ev.result : ""), stamp(ev.at)));
  },
};

// showProgress shows a long turn's signs of life at the foot of its
// chat ("" takes them away).
function showProgress(chat, text) {
  const box = chatBox(chat).box;
  let p = $(".progress", box);
  if (!text) { if (p) p.remove(); return; }
  const follow = atBottom();
  if (!p) p = el("div", { class: "progress", role: "status" });
  p.textContent = text;
  box.append(p); // under the latest output
  scrollDown(follow);
}

function setOnline(on) { const d = $("#dot"); d.classList.toggle("on", on); d.title = on ? "connected" : "reconnecting…"; }

function connect() {
  if (state.es) state.es.close();
  const es = new EventSource("/api/events?after=" + encodeURIComponent(state.lastId));
  state.es = es;
  es.onopen = () => { setOnline(true); syncPending(); };
  es.onerror = () => {
    setOnline(false);
    // The browser retries by itself unless the server answered with an
    // error (401 after a token change, 503 while starting): then check why.
    if (es.readyState === EventSource.CLOSED) setTimeout(async () => {
      if (state.es !== es) return;
      try { await api("GET", "/api/info"); } catch (e) { if (/token/.test(e.message)) return; }
      if (state.es === es) connect();
    }, 1000);
  };
  for (const name of Object.keys(handlers)) {
    es.addEventListener(name, e => {
      if (e.lastEventId) state.lastId = e.lastEventId;
      let data; try { data = JSON.parse(e.data); } catch { return; }
      handlers[name](data);
      attention();
    });
  }
}

// syncPending shows what is pending and closes cards that no longer are
// (after a restart, or events missed while away).
async function syncPending() {
  let list, info;
  // Only cards shown before the list is asked for can be judged by it: one
  // requested meanwhile arrives by the event stream and is not in the list.
  const before = new Set([...state.cards.keys()]);
  try { info = await api("GET", "/api/info"); list = await api("GET", "/api/interactions"); } catch { return; }
  const restarted = state.boot && info.boot !== state.boot;
  state.boot = info.boot;
  const live = new Set(list.map(it => it.interaction_id));
  for (const it of list) handlers["interaction.requested"](it);
  for (const [id, c] of state.cards) {
    if (!before.has(id) || live.has(id) || !$(".actions", c.card)) continue;
    if (restarted) {
      // leashd may still take the answer (it keeps a database): keep the
      // buttons; a tap it refuses closes the card.
      if (!$(".notice", c.card)) $(".actions", c.card).before(el("div", { class: "notice", text: "leashd restarted while this was waiting; you can still try to answer." }));
    } else closeCard(id, { status: "stale", text: "No longer pending." });
  }
}

async function send(text) {
  const chat = state.chat;
  try { await api("POST", "/api/chats/" + encodeURIComponent(chat) + "/messages", { text }); }
  catch (e) { toast(e.message); return false; }
  return true;
}

function showLogin() {
  $("#login").style.display = "flex"; $("#log").style.display = "none"; $("#composer").style.display = "none";
  $("#chats").hidden = $("#newchat").hidden = $("#rename").hidden = true; // nothing to pick before the token
}

async function start() {
  attention();
  $("#login").addEventListener("submit", e => { e.preventDefault(); const t = $("#tokenin").value.trim(); if (t) location.href = "/?token=" + encodeURIComponent(t); });
  let info;
  try { info = await api("GET", "/api/info"); } catch (e) { if (!/token/.test(e.message)) { toast(e.message); setTimeout(start, 2000); } return; }
  $("#agent").textContent = info.agent;
  state.boot = info.boot;
  chatBox(state.chat);
  try { for (const c of await api("GET", "/api/chats")) noteFirst(c.chat_id, c.first_text); } catch {}
  switchChat(state.chat);
  const ta = $("#text");
  $("#composer").addEventListener("submit", async e => {
    e.preventDefault();
    const t = ta.value.trim(); if (!t) return;
    ta.value = "";
    scrollDown(true);
    if (!(await send(t))) ta.value = t;
  });
  ta.addEventListener("keydown", e => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("#composer").requestSubmit(); } });
  $("#chats").addEventListener("change", e => switchChat(e.target.value));
  $("#rename").addEventListener("click", rename);
  $("#newchat").addEventListener("click", () => { const id = "web-" + Math.random().toString(36).slice(2, 8); remember(id); switchChat(id); });
  setupFiles();
  connect();
}

// Files: the attach button, pasting and dropping send pictures and files
// with the composer's text as their words; the record button sends a voice
// note. The agent's files arrive as "file" events with a download link.
async function upload(files, voice) {
  const ta = $("#text"), text = ta.value.trim(), fd = new FormData();
  if (text) fd.append("text", text);
  if (voice) fd.append("voice", "1");
  for (const f of files) fd.append("file", f, f.name || "pasted.png");
  ta.value = "";
  const r = await fetch("/api/chats/" + encodeURIComponent(state.chat) + "/files", { method: "POST", body: fd, credentials: "same-origin" });
  if (!r.ok) { const d = await r.json().catch(() => null); toast((d && d.error) || (r.status + " " + r.statusText)); ta.value = text; }
}
function setupFiles() {
  const pick = $("#attachin");
  $("#attach").addEventListener("click", () => pick.click());
  pick.addEventListener("change", () => { if (pick.files.length) upload([...pick.files]); pick.value = ""; });
  $("#text").addEventListener("paste", e => { const fs = [...(e.clipboardData ? e.clipboardData.files : [])]; if (fs.length) { e.preventDefault(); upload(fs); } });
  document.addEventListener("dragover", e => e.preventDefault());
  document.addEventListener("drop", e => { e.preventDefault(); const fs = [...(e.dataTransfer ? e.dataTransfer.files : [])]; if (fs.length) upload(fs); });
  const rec = $("#record");
  if (!navigator.mediaDevices || !window.MediaRecorder) { rec.hidden = true; return; }
  let mr = null;
  rec.addEventListener("click", async () => {
    if (mr) { mr.stop(); return; }
    let stream; try { stream = await navigator.mediaDevices.getUserMedia({ audio: true }); } catch (e) { toast("No microphone: " + e.message); return; }
    const parts = []; mr = new MediaRecorder(stream);
    mr.ondataavailable = e => parts.push(e.data);
    mr.onstop = () => { stream.getTracks().forEach(t => t.stop()); rec.classList.remove("on"); const type = mr.mimeType || "audio/webm"; mr = null; upload([new File(parts, "voice." + (type.includes("ogg") ? "ogg" : "webm"), { type })], true); };
    mr.start(); rec.classList.add("on");
  });
}
handlers.file = ev => {
  const link = el("a", { href: ev.url, download: ev.name, text: "📎 " + ev.name });
  add(ev.chat_id, el("div", { class: "msg bot" }, el("div", { class: "body" }, link, ev.caption ? el("div", { text: ev.caption }) : null), stamp(ev.at)));
};
start();
