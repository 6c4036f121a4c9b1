package web_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// What a person sees on the page, checked in Chromium on a phone (390×844):
// tap sizes, contrast, colours, the words used, timestamps, the tab title.

// auditJS enumerates everything a person can tap or type in — generically,
// so a new kind of button cannot escape — that is visible, and reports the
// ones smaller than 44×44 CSS px and the texts on them with less than 4.5:1
// contrast against what is behind them. Links inside running text (a
// message, a plan) are exempt, as WCAG 2.5.5 exempts inline links.
const auditJS = `(() => {
	const tappable = 'button, select, input:not([type=hidden]), textarea, a[href], summary, label, [role=button], [onclick], [tabindex]:not([tabindex="-1"])';
	const visible = n => {
		const r = n.getBoundingClientRect(), s = getComputedStyle(n);
		return r.width > 0 && r.height > 0 && s.visibility === "visible" && n.closest("[hidden]") === null;
	};
	const rgba = c => { const m = c.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
	const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
	// The colour behind n: the first opaque background up the tree, with
	// translucent ones blended over it.
	const behind = n => {
		const layers = [];
		for (let e = n; e; e = e.parentElement) {
			const c = rgba(getComputedStyle(e).backgroundColor);
			if (c.a > 0) layers.push(c);
			if (c.a >= 1) break;
		}
		let out = { r: 255, g: 255, b: 255, a: 1 };
		for (const c of layers.reverse()) out = { r: c.r * c.a + out.r * (1 - c.a), g: c.g * c.a + out.g * (1 - c.a), b: c.b * c.a + out.b * (1 - c.a), a: 1 };
		return out;
	};
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const name = n => n.tagName.toLowerCase() + (n.id ? "#" + n.id : "") + (n.className && typeof n.className === "string" ? "." + n.className.trim().split(/\s+/).join(".") : "") +
		(n.getAttribute("data-label") ? "[" + n.getAttribute("data-label") + "]" : "") + ' "' + (n.innerText || n.value || n.placeholder || "").trim().slice(0, 30) + '"';
	const out = { count: 0, kinds: [], small: [], low: [] };
	const kinds = new Set();
	for (const n of document.querySelectorAll(tappable)) {
		if (!visible(n) || n.disabled) continue;
		if (n.matches("a") && n.closest(".msg, .plan")) continue; // inline link in text
		out.count++;
		kinds.add(n.tagName.toLowerCase() + "." + (typeof n.className === "string" ? n.className.trim().split(/\s+/).sort().join(".") : ""));
		const r = n.getBoundingClientRect();
		if (r.height < 44 || r.width < 44) out.small.push(name(n) + " " + Math.round(r.width) + "×" + Math.round(r.height));
		// The text on it: the element itself and each descendant that holds text.
		for (const e of [n, ...n.querySelectorAll("*")]) {
			if (!visible(e) || ![...e.childNodes].some(t => t.nodeType === 3 && t.textContent.trim())) continue;
			const fg = rgba(getComputedStyle(e).color), cr = ratio(fg, behind(e));
			if (cr < 4.5) out.low.push(name(n) + ": " + JSON.stringify(e.textContent.trim().slice(0, 30)) + " " + cr.toFixed(2) + ":1");
		}
	}
	out.kinds = [...kinds].sort();
	return out;
})()`

type audit struct {
	Count int      `json:"count"`
	Kinds []string `json:"kinds"`
	Small []string `json:"small"`
	Low   []string `json:"low"`
}

// checkTapAndContrast audits the page in the light and the dark colour
// scheme; it returns the kinds of tappable things seen.
func checkTapAndContrast(t *testing.T, ctx context.Context, what string, atLeast int) []string {
	t.Helper()
	var kinds []string
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, ctx, scheme)
		a, err := chromedp.Run(ctx, chromedp.Evaluate[audit](auditJS))
		require.NoError(t, err)
		assert.GreaterOrEqual(t, a.Count, atLeast, "%s (%s): the audit found the buttons and fields (%v)", what, scheme, a.Kinds)
		assert.Empty(t, a.Small, "%s (%s): everything tappable is at least 44×44 px", what, scheme)
		assert.Empty(t, a.Low, "%s (%s): text on buttons and fields has at least 4.5:1 contrast", what, scheme)
		kinds = a.Kinds
	}
	colorScheme(t, ctx, "light")
	return kinds
}

// colorScheme emulates prefers-color-scheme.
func colorScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})))
	dark, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`matchMedia("(prefers-color-scheme: dark)").matches`))
	require.NoError(t, err)
	require.Equal(t, scheme == "dark", dark, "the emulated colour scheme took effect")
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// waitTitle waits until the tab's title is want.
func waitTitle(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := evalJS[string](t, ctx, "document.title")
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tab's title is %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// visibleText is the page's text as rendered (hidden chats have none).
func visibleText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return evalJS[string](t, ctx, "document.body.innerText")
}

// hue names the dominant colour of a computed background.
const hueJS = `(sel => { const m = getComputedStyle(document.querySelector(sel)).backgroundColor.match(/[\d.]+/g).map(Number);
	const [r, g, b] = m; return r > g + 40 && r > b + 40 ? "red" : g > r + 40 && g > b + 20 ? "green" : "other"; })`

// phone opens the page in Chromium as a phone (390×844, touch) on a leashd
// with the demo agent and a second connector ("telegram"); it returns the
// tab, the server, an event stream and this browser's chat ID.
func phone(t *testing.T) (context.Context, *env, *sse, string) {
	t.Helper()
	ctx := browser(t)
	e := start(t, setup{delay: time.Millisecond, extra: []connectors.Connector{&otherConn{}}})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Emulate(device.IPhone12)), "a phone: 390×844, touch")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	require.Equal(t, []int{390, 844}, evalJS[[]int](t, ctx, "[innerWidth, innerHeight]"))
	return ctx, e, s, evalJS[string](t, ctx, `localStorage.getItem("leashd.chat")`)
}

// waitCard waits for the next request's card and returns its selector.
func waitCard(t *testing.T, ctx context.Context, s *sse) (string, sseEvent) {
	t.Helper()
	ev := s.next("interaction.requested")
	card := `.card[data-id="` + id(ev) + `"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card+" button"))))
	return card, ev
}

// hiddenJS reports whether the element sel is not rendered at all.
const hiddenJS = `(sel => { const n = document.querySelector(sel), r = n.getBoundingClientRect();
	return getComputedStyle(n).display === "none" && r.width === 0 && r.height === 0 && n.getClientRects().length === 0; })`

// Issue 16.1: only the chosen chat is on the page. Another connector's
// chat with a request, and a chat started with New, are listed but not
// shown; the page does not scroll to them.
func TestBrowserShowsOneChatAtATime(t *testing.T) {
	ctx, e, s, mine := phone(t)
	sendPrompt(t, ctx, "hello")
	waitText(t, ctx, `You said: "hello"`)

	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:42", UserID: "7", Text: "run bash"})
	require.NoError(t, err)
	tb := s.until("interaction.requested", func(ev sseEvent) bool { return ev.Data["chat_id"] == "telegram:42" })
	waitSel(t, ctx, `.card[data-id="`+id(tb)+`"]`)
	assert.True(t, evalJS[bool](t, ctx, hiddenJS+`('.chat[data-chat="telegram:42"]')`), "the Telegram chat is not shown")
	assert.Zero(t, evalJS[int](t, ctx, `document.querySelector('.card[data-id="`+id(tb)+`"]').getClientRects().length`), "nor its request")
	assert.NotContains(t, visibleText(t, ctx), "The agent wants to run a command")
	assert.Greater(t, evalJS[float64](t, ctx, `document.querySelector('.chat[data-chat="`+mine+`"]').getBoundingClientRect().height`), 0.0, "this browser's chat is shown")
	assert.Equal(t, 1, evalJS[int](t, ctx, `[...document.querySelectorAll(".chat")].filter(c => c.getClientRects().length).length`), "one chat on the page")

	// New: a second chat of this browser; the first is hidden, the new one
	// is the only one shown.
	click(t, ctx, "#newchat")
	assert.True(t, evalJS[bool](t, ctx, hiddenJS+`('.chat[data-chat="`+mine+`"]')`), "the first chat is hidden after New")
	assert.NotContains(t, visibleText(t, ctx), "You said")
	assert.Equal(t, 1, evalJS[int](t, ctx, `[...document.querySelectorAll(".chat")].filter(c => c.getClientRects().length).length`), "one chat on the page")
	waitText(t, ctx, "Send a message to start.")

	// Choosing the Telegram chat shows it, and only it.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector("#chats"); s.value = "telegram:42"; return s.dispatchEvent(new Event("change")); })()`))
	require.NoError(t, err)
	waitText(t, ctx, "The agent wants to run a command") // plain words, not the tool's name
	assert.NotContains(t, visibleText(t, ctx), "Bash")
	assert.True(t, evalJS[bool](t, ctx, hiddenJS+`('.chat[data-chat="`+mine+`"]')`))
	assert.Equal(t, 1, evalJS[int](t, ctx, `[...document.querySelectorAll(".chat")].filter(c => c.getClientRects().length).length`), "one chat on the page")
}

// Issue 16.2: on a phone everything tappable is at least 44×44 px and its
// text has at least 4.5:1 contrast, in light and dark mode; Allow is green
// and Deny red; a chosen option of a multi-select shows a check mark.
func TestBrowserTapTargetsAndColours(t *testing.T) {
	ctx, _, s, _ := phone(t)
	kinds := map[string]bool{}
	note := func(ks []string) {
		for _, k := range ks {
			kinds[k] = true
		}
	}
	note(checkTapAndContrast(t, ctx, "the empty page", 4))

	sendPrompt(t, ctx, "bash")
	card, b := waitCard(t, ctx, s)
	for _, scheme := range []string{"light", "dark"} {
		colorScheme(t, ctx, scheme)
		assert.Equal(t, "green", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="allow"]')`), "Allow is green (%s)", scheme)
		assert.Equal(t, "red", evalJS[string](t, ctx, hueJS+`('`+card+` button[data-label="deny"]')`), "Deny is red (%s)", scheme)
	}
	note(checkTapAndContrast(t, ctx, "a tool approval", 8))
	colorScheme(t, ctx, "dark")
	screenshot(t, ctx, "phone-tool-approval-dark.png", true, chromedp.Emulate(device.IPhone12))
	colorScheme(t, ctx, "light")
	click(t, ctx, card+` button[data-label="allow"]`)
	s.resolved(id(b))

	sendPrompt(t, ctx, "question")
	card, q1 := waitCard(t, ctx, s)
	note(checkTapAndContrast(t, ctx, "a question", 7))
	click(t, ctx, card+` button[data-label="SQLite"]`)
	s.resolved(id(q1))
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Auth"]`)
	waitSel(t, ctx, card+` button.on[data-label="Auth"]`)
	checks := evalJS[map[string]bool](t, ctx, `(() => { const out = {};
		for (const b of document.querySelectorAll('`+card+` button.toggle')) {
			const c = b.querySelector(".check"), r = c ? c.getBoundingClientRect() : null;
			out[b.dataset.label] = !!c && c.textContent === "✓" && getComputedStyle(c).visibility === "visible" && r.width > 0 && r.height > 0;
		}
		return out; })()`)
	assert.Equal(t, map[string]bool{"Auth": true, "Search": false, "Billing": false}, checks, "a visible check mark on the chosen option only")
	note(checkTapAndContrast(t, ctx, "a multi-select question with a choice", 8))
	screenshot(t, ctx, "phone-question.png", true, chromedp.Emulate(device.IPhone12))
	click(t, ctx, card+" button.confirm")

	sendPrompt(t, ctx, "plan")
	card, _ = waitCard(t, ctx, s)
	note(checkTapAndContrast(t, ctx, "a plan review", 6))
	click(t, ctx, card+` button[data-label="adjust"]`)
	waitSel(t, ctx, card+" .feedback input")
	note(checkTapAndContrast(t, ctx, "a plan review asking for feedback", 8))
	t.Logf("kinds of tappable things audited: %d %v", len(kinds), slices.Sorted(maps.Keys(kinds)))
	assert.GreaterOrEqual(t, len(kinds), 12, "the audit saw every kind of button")
}

// Issue 16.3: people read plain words — outcomes ("Approved — clear
// context", "by you"), chat names ("This browser", "Telegram") — each
// outcome once, whole, and their own line breaks; never internal keys
// (clean_edit, by web, decision:), raw chat IDs or a literal \n.
func TestBrowserPlainWords(t *testing.T) {
	ctx, e, s, mine := phone(t)

	sendPrompt(t, ctx, "bash")
	card, _ := waitCard(t, ctx, s)
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(card+" .row input"), "not now")))
	click(t, ctx, card+` button[data-label="deny"]`)
	waitText(t, ctx, "Denied: not now · by you")

	sendPrompt(t, ctx, "question")
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Postgres"]`)
	waitText(t, ctx, "Answered: Postgres · by you")
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Search"]`)
	waitSel(t, ctx, card+` button.on[data-label="Search"]`)
	click(t, ctx, card+" button.confirm")
	waitText(t, ctx, "Answered: Search · by you")

	sendPrompt(t, ctx, "plan")
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="clean_edit"]`)
	card, b2 := waitCard(t, ctx, s)
	require.Equal(t, "Bash", b2.Data["tool_name"], "the fresh session runs the plan")
	click(t, ctx, card+` button[data-label="allow_session"]`)
	waitText(t, ctx, "Allowed for this session · by you")
	waitText(t, ctx, "Bash echo hello allowed for the session. Output: hello")
	waitText(t, ctx, "Approved — clear context · by you")

	sendPrompt(t, ctx, "plan")
	card, _ = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="edit"]`)
	waitText(t, ctx, "Approved — auto-accept edits · by you")
	waitText(t, ctx, "Going ahead with the plan.")

	// A message of several lines comes back with its line breaks.
	evalJS[string](t, ctx, `document.querySelector("#text").value = "first line\nsecond line"`)
	click(t, ctx, "#send")
	waitText(t, ctx, "You said: \"first line\nsecond line\". I am the demo agent")
	assert.Equal(t, 1, count(t, ctx, ".msg.bot .body br"), "the line break is a line break")

	text := visibleText(t, ctx)
	for _, internal := range []string{"clean_edit", "by web", "decision", `\n`, mine, "(adjust)"} {
		if !assert.NotContains(t, text, internal, "no internal words on the page") {
			t.Logf("the page shows:\n%s", text)
		}
	}
	assert.Equal(t, 1, strings.Count(text, "fresh session"), "the fresh session is announced once:\n%s", text)
	assert.Equal(t, 2, strings.Count(text, "Plan approved."), "each approval is said once in the chat (besides its card):\n%s", text)
	for _, m := range regexp.MustCompile(`(?m)^.*Plan approved.*$`).FindAllString(text, -1) {
		assert.True(t, strings.HasSuffix(m, "."), "the message is whole: %q", m)
	}

	// Chats are named for people: this browser, the chat app.
	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:42", UserID: "7", Text: "run bash"})
	require.NoError(t, err)
	waitSel(t, ctx, `#chats option[value="telegram:42"]`)
	click(t, ctx, "#newchat")
	labels := evalJS[[]string](t, ctx, `[...document.querySelectorAll("#chats option")].map(o => o.textContent)`)
	require.Len(t, labels, 3)
	assert.Equal(t, "bash", labels[0], "named by its first message")
	assert.Regexp(t, `^Telegram · 1 waiting \(\d+\)$`, labels[1], "named by its app, with what waits and what is unread")
	assert.Equal(t, "This browser", labels[2], "nothing said in it yet")
	assert.NotRegexp(t, `web-[a-z0-9]{6}|telegram:42`, visibleText(t, ctx))
}

// Issue 16.4: every message, card and summary shows its time, and while a
// request waits for an answer the tab's title and icon say so.
func TestBrowserTimestampsAndTabTitle(t *testing.T) {
	ctx, e, s, _ := phone(t)
	waitTitle(t, ctx, "leashd")
	icon := func() string { return evalJS[string](t, ctx, `document.querySelector("link[rel=icon]").href`) }
	assert.NotContains(t, icon(), "circle", "no badge while nothing waits")

	sendPrompt(t, ctx, "bash")
	card, b := waitCard(t, ctx, s)
	waitTitle(t, ctx, "(1) leashd")
	assert.Contains(t, icon(), "circle", "the icon has a badge while something waits")
	// A request in another chat counts too: the page can answer it.
	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:42", UserID: "7", Text: "run bash"})
	require.NoError(t, err)
	tb := s.until("interaction.requested", func(ev sseEvent) bool { return ev.Data["chat_id"] == "telegram:42" })
	waitTitle(t, ctx, "(2) leashd")
	_, err = e.coord.Reply(id(tb), interactions.Reply{By: "7", Answers: []string{"allow"}})
	require.NoError(t, err)
	waitTitle(t, ctx, "(1) leashd")
	click(t, ctx, card+` button[data-label="allow"]`)
	s.resolved(id(b))
	waitTitle(t, ctx, "leashd")
	assert.NotContains(t, icon(), "circle", "no badge once answered")

	sendPrompt(t, ctx, "hello")
	s.until("agent.done", func(ev sseEvent) bool { return ev.Data["chat_id"] != "telegram:42" })
	waitText(t, ctx, `You said: "hello"`)
	stamps := evalJS[map[string]int](t, ctx, `(() => {
		const items = document.querySelectorAll(".chat:not([hidden]) :is(.msg, .card .head, .card .outcome, .done)"), out = { items: items.length, stamped: 0 };
		const now = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
		for (const n of items) {
			const ts = n.querySelector("time.ts");
			if (ts && ts.getClientRects().length && /^\d{1,2}:\d{2}/.test(ts.textContent) && n.innerText.includes(ts.textContent) && Math.abs(new Date(ts.dateTime) - Date.now()) < 60000) out.stamped++;
		}
		return out; })()`)
	assert.GreaterOrEqual(t, stamps["items"], 7, "user messages, agent messages, the card's head and outcome, summaries")
	assert.Equal(t, stamps["items"], stamps["stamped"], "each shows the time it happened")
}

// screenshot saves what the viewport shows as a PNG at twice its CSS
// size, then puts back the emulation given (the phone or the desktop
// window). With LEASHD_TEST_SCREENSHOTS=<dir> it writes there (the
// README's pictures come from connectors/web/screenshots); otherwise it is
// a test artifact.
func screenshot(t *testing.T, ctx context.Context, name string, mobile bool, restore chromedp.Action[chromedp.Void]) {
	t.Helper()
	wh := evalJS[[]int64](t, ctx, "[innerWidth, innerHeight]")
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(2)}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(wh[0], wh[1], opts...)))
	time.Sleep(100 * time.Millisecond) // the layout settles at the new scale
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, restore))
	if dir := os.Getenv("LEASHD_TEST_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		t.Logf("wrote %s (%d KB)", p, len(b)>>10)
		return
	}
	artifact(t, name, b)
}

// On a desktop window the conversation is a centred column, and the page
// passes the same tap-size and contrast audit.
func TestBrowserDesktop(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{delay: time.Millisecond})
	s := e.subscribe("")
	desktop := chromedp.EmulateViewport(1280, 800)
	require.NoError(t, chromedp.Do(ctx, desktop, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	require.Equal(t, []int{1280, 800}, evalJS[[]int](t, ctx, "[innerWidth, innerHeight]"))
	sendPrompt(t, ctx, "question")
	card, q := waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="SQLite"]`)
	s.resolved(id(q))
	card, q = waitCard(t, ctx, s)
	click(t, ctx, card+` button[data-label="Auth"]`)
	waitSel(t, ctx, card+` button.on[data-label="Auth"]`)
	click(t, ctx, card+` button[data-label="Search"]`)
	waitSel(t, ctx, card+` button.on[data-label="Search"]`)
	click(t, ctx, card+" button.confirm")
	s.resolved(id(q))
	sendPrompt(t, ctx, "plan")
	card, _ = waitCard(t, ctx, s)
	col := evalJS[map[string]float64](t, ctx, `(() => { const r = document.querySelector(".chat:not([hidden])").getBoundingClientRect(); return { left: r.left, right: innerWidth - r.right, width: r.width }; })()`)
	assert.InDelta(t, col["left"], col["right"], 20, "the column is centred: %v", col)
	assert.LessOrEqual(t, col["width"], 800.0, "and no wider than a line people read: %v", col)
	checkTapAndContrast(t, ctx, "a plan review on a desktop", 7)
	evalJS[bool](t, ctx, `(document.querySelector("#log").scrollTop = document.querySelector("#log").scrollHeight, true)`)
	screenshot(t, ctx, "desktop-plan-review.png", false, desktop)
	click(t, ctx, card+` button[data-label="default"]`)
	waitText(t, ctx, "Approved — review edits · by you")
}
