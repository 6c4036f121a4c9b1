package web_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// browser starts headless Chromium (a phone-sized window) and returns a
// tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := testenv.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.WindowSize(390, 844),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { tcancel(); cancel(); acancel() })
	require.NoError(t, chromedp.Do(ctx), "starting Chromium")
	return ctx
}

// waitText waits until the page's visible text contains s.
func waitText(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	js := "document.body.innerText.includes(" + jsString(s) + ")"
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		require.NoError(t, err)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
			t.Fatalf("the page never showed %q; it shows:\n%s", s, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSel waits until sel matches, dumping the page on failure.
func waitSel(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for count(t, ctx, sel) == 0 {
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
			html, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.querySelector('main').innerHTML"))
			t.Fatalf("%s never appeared; the page shows:\n%s\n%s", sel, body, html)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("document.querySelectorAll("+jsString(sel)+").length"))
	require.NoError(t, err)
	return n
}

// artifact saves b under LEASHD_TEST_ARTIFACTS (default: the system's temp
// directory) and logs where.
func artifact(t *testing.T, name string, b []byte) {
	t.Helper()
	dir := os.Getenv("LEASHD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "leashd-test-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	t.Logf("wrote %s", p)
}

func sendPrompt(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.Click(chromedp.CSS("#send")),
	))
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(cctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.querySelector('main').innerHTML"))
		t.Fatalf("clicking %s: %v; the page shows:\n%s\n%s", sel, err, body, html)
	}
}

// The demo's question flow in a real browser: type "question", tap an
// option, toggle two options, confirm, and see the agent's report; the
// buttons are gone once answered.
func TestBrowserQuestionFlow(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{delay: 2 * time.Millisecond, token: "tok"})
	s := e.subscribe("")

	require.NoError(t, chromedp.Do(ctx, chromedp.Emulate(device.IPhone12)), "a phone: 390×844, touch")
	t0 := time.Now()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/?token="+url.QueryEscape("tok")),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
	))
	t.Logf("page load to live event stream: %s", time.Since(t0))
	agent, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#agent")))
	require.NoError(t, err)
	require.Equal(t, "demo agent", agent)

	sendPrompt(t, ctx, "question")
	q1 := s.next("interaction.requested")
	t1 := time.Now()
	click(t, ctx, `.card[data-id="`+id(q1)+`"] button[data-label="SQLite"]`)
	r1 := s.resolved(id(q1))
	t.Logf("tap in the browser to interaction.resolved: %s", time.Since(t1))
	require.Equal(t, "SQLite", r1.Data["answer"], "the tap reached the coordinator")

	// The first card closes (its buttons go, the page shifts) before the
	// next taps: a click is aimed at coordinates.
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS(`.card[data-id="`+id(q1)+`"] .actions`))))
	q2 := s.next("interaction.requested")
	card := `.card[data-id="` + id(q2) + `"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card+` button[data-label="Auth"]`))))
	click(t, ctx, card+` button[data-label="Auth"]`)
	waitSel(t, ctx, card+` button.on[data-label="Auth"]`)
	s.until("interaction.updated", func(ev sseEvent) bool { return len(ev.Data["selected"].([]any)) == 1 })
	click(t, ctx, card+` button[data-label="Billing"]`)
	s.until("interaction.updated", func(ev sseEvent) bool { return len(ev.Data["selected"].([]any)) == 2 })
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card+` button.on[data-label="Billing"]`))))
	require.Equal(t, 2, count(t, ctx, card+" button.toggle.on"), "Auth and Billing shown as selected")
	pending, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-question-pending.png", pending)
	click(t, ctx, card+" button.confirm")

	report := `Thanks. Your answers: Which database? SQLite; Which features? Auth, Billing`
	waitText(t, ctx, report)
	s.saying(report) // what the agent received, as it reported it
	waitText(t, ctx, "Answered: Auth, Billing · by you")
	require.Zero(t, count(t, ctx, ".card .actions"), "no buttons left on answered cards")
	require.Zero(t, count(t, ctx, "button[data-label]"))

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	require.NoError(t, err)
	artifact(t, "web-question-flow.png", shot)
}

// Plan review (adjust with typed feedback) and a tool approval denied with
// a reason, in the browser.
func TestBrowserPlanAndTool(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.pageURL()),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
	))

	sendPrompt(t, ctx, "plan")
	p := s.next("interaction.requested")
	card := `.card[data-id="` + id(p) + `"]`
	// The plan is rendered as Markdown: heading, list, code block.
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card+" .plan h3"))))
	code, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(card+" .plan pre code")))
	require.NoError(t, err)
	require.Equal(t, "echo hello", code)
	require.Equal(t, 2, count(t, ctx, card+" .plan ol li"))
	require.Equal(t, 4, count(t, ctx, card+" button[data-label]"), "the four decisions")

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-plan-review.png", shot)
	click(t, ctx, card+` button[data-label="adjust"]`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(card+" .feedback input")),
		chromedp.SendKeys(chromedp.CSS(card+" .feedback input"), "use tabs"),
		chromedp.Click(chromedp.CSS(card+" .feedback button")),
	))
	r := s.resolved(id(p))
	require.Equal(t, "adjust", r.Data["decision"])
	require.Equal(t, "use tabs", r.Data["text"])
	waitText(t, ctx, `Your feedback: "use tabs"`)
	waitText(t, ctx, "Changes asked for: use tabs · by you")

	sendPrompt(t, ctx, "bash")
	b := s.next("interaction.requested")
	card = `.card[data-id="` + id(b) + `"]`
	cmd, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(card+" pre"), chromedp.NodeVisible))
	require.NoError(t, err)
	require.Equal(t, "echo hello\n# Print hello", cmd)
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-tool-approval.png", shot)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(card+" .row input"), "not on a train"),
		chromedp.Click(chromedp.CSS(card+` button[data-label="deny"]`)),
	))
	waitText(t, ctx, "Bash echo hello denied: not on a train") // `code` rendered
	require.Zero(t, count(t, ctx, ".card .actions"))
}

// The page reconnects after the server restarts: a card left pending by
// the old server is told so before the server goes and keeps its buttons
// with the notice (leashd may still take the answer); a tap the new server
// refuses closes it; new prompts work.
func TestBrowserReconnectsAfterRestart(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{})
	addr := strings.TrimPrefix(e.url, "http://")
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	sendPrompt(t, ctx, "bash")
	b := s.next("interaction.requested")
	card := `.card[data-id="` + id(b) + `"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card+` button[data-label="allow"]`))))

	e.stop()
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitNotPresent(chromedp.CSS("#dot.on"))))
	// The stream got the shutdown's interruption before it closed.
	waitText(t, ctx, interactions.InterruptedNotice)
	require.Equal(t, 1, count(t, ctx, card+" .actions"), "the buttons are kept while leashd is down")
	t0 := time.Now()
	e2 := start(t, setup{addr: addr}) // no database: the old request is gone
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#dot.on"))))
	t.Logf("reconnected %s after the restart", time.Since(t0))
	require.Equal(t, 1, count(t, ctx, card+" .actions"), "the buttons are kept")
	click(t, ctx, card+` button[data-label="allow"]`)
	waitText(t, ctx, "no such interaction")
	require.Zero(t, count(t, ctx, ".card .actions"), "refused: the buttons are gone")

	s2 := e2.subscribe("")
	sendPrompt(t, ctx, "hello again")
	s2.next("agent.done")
	waitText(t, ctx, `You said: "hello again"`)
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(".msg.user")))
	require.NoError(t, err)
	require.Len(t, nodes, 2, "the old prompt is still shown, the new one once")
}

// Without the token the page asks for it; with it the page works. What
// people and the agent write is shown as text, never run as HTML.
func TestBrowserLoginAndEscaping(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{token: "pa ss/word"})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.url), chromedp.WaitVisible(chromedp.CSS("#login"))))
	checkTapAndContrast(t, ctx, "the token form", 2)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#tokenin"), "pa ss/word"),
		chromedp.Click(chromedp.CSS("#login button")),
		chromedp.WaitVisible(chromedp.CSS("#dot.on")),
	))
	evil := `<img src=x onerror="window.pwned=1"> **bold** <script>window.pwned=2</script>`
	sendPrompt(t, ctx, evil)
	s.next("agent.done")
	waitText(t, ctx, `You said: "<img src=x onerror="window.pwned=1"> bold <script>window.pwned=2</script>"`)
	require.Zero(t, count(t, ctx, "main img"), "no element made from the text")
	require.Zero(t, count(t, ctx, "main script"))
	require.Equal(t, 1, count(t, ctx, ".msg.bot strong"), "Markdown still works")
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("window.pwned !== undefined"))
	require.NoError(t, err)
	require.False(t, pwned)
	var user string
	user, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".msg.user .body")))
	require.NoError(t, err)
	require.Equal(t, evil, user)
}

// The page watches chats of other connectors (here "telegram:42"): they
// appear in the chat list with an unread count, and their requests can be
// answered from the page.
func TestBrowserAnswersAnotherConnectorsChat(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{extra: []connectors.Connector{&otherConn{}}})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))

	_, err := e.eng.HandleMessage(context.Background(), connectors.Incoming{ChatID: "telegram:42", UserID: "7", Text: "run bash"})
	require.NoError(t, err)
	b := s.next("interaction.requested")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#chats option[value="telegram:42"]`))))
	label, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#chats option[value="telegram:42"]`)))
	require.NoError(t, err)
	require.Regexp(t, `^Telegram · 1 waiting \(\d+\)$`, label, "named by its app, with what waits and the unread count")

	// Choose it as a person does: the value and its change event in one
	// task (events arriving meanwhile re-render the list).
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector("#chats"); s.value = "telegram:42"; return s.dispatchEvent(new Event("change")); })()`))
	require.NoError(t, err)
	click(t, ctx, `.card[data-id="`+id(b)+`"] button[data-label="allow_session"]`)
	r := s.resolved(id(b))
	require.Equal(t, "allow_session", r.Data["decision"])
	waitText(t, ctx, "Bash echo hello allowed for the session. Output: hello")
}

// A question answered with "Other": free text typed on the page reaches the
// agent as the answer itself; on a phone the header shows the agent's name
// whole.
func TestBrowserOtherFreeTextAnswer(t *testing.T) {
	ctx := browser(t)
	e := start(t, setup{})
	s := e.subscribe("")
	require.NoError(t, chromedp.Do(ctx, chromedp.Emulate(device.IPhone12)), "a phone: 390×844, touch")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.pageURL()), chromedp.WaitVisible(chromedp.CSS("#dot.on"))))

	// Nothing in the header is cut or pushed off the screen.
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]bool](`(() => {
		const out = {};
		for (const id of ["agent", "chats", "newchat"]) {
			const n = document.getElementById(id), r = n.getBoundingClientRect();
			out[id] = r.width > 0 && r.left >= 0 && r.right <= document.documentElement.clientWidth && n.scrollWidth <= Math.ceil(r.width);
		}
		return out;
	})()`))
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"agent": true, "chats": true, "newchat": true}, fits, "header items whole and on screen at 390 px")
	agent, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#agent")))
	require.NoError(t, err)
	require.Equal(t, "demo agent", agent)

	sendPrompt(t, ctx, "question")
	q1 := s.next("interaction.requested")
	card := `.card[data-id="` + id(q1) + `"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(card+` .row input[placeholder="Other: type your answer"]`)),
		chromedp.SendKeys(chromedp.CSS(card+" .row input"), "DuckDB, embedded"),
		chromedp.Click(chromedp.CSS(card+" .row button"), chromedp.NodeVisible),
	))
	r1 := s.resolved(id(q1))
	require.Equal(t, "answered", r1.Data["status"])
	require.Equal(t, "DuckDB, embedded", r1.Data["answer"], "the typed text is the answer, not \"Other\"")

	// The multi-select question takes typed text too, sent with Enter.
	q2 := s.next("interaction.requested")
	card = `.card[data-id="` + id(q2) + `"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(card+" .row input")),
		chromedp.SendKeys(chromedp.CSS(card+" .row input"), "Audit log\r"),
	))
	require.Equal(t, "Audit log", s.resolved(id(q2)).Data["answer"])

	report := `Thanks. Your answers: Which database? DuckDB, embedded; Which features? Audit log`
	waitText(t, ctx, report)
	s.saying(report) // what the agent received, as it reported it
	require.Zero(t, count(t, ctx, ".card .actions"), "no buttons left on answered cards")
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	artifact(t, "web-question-other.png", shot)
}
