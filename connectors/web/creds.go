package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/interactions"
)

// Who may do what through the API and /mcp (issue #30): the page's token
// (LEASHD_WEB_TOKEN or the generated one) may do everything; each token of
// LEASHD_API_TOKENS asks only in the chats its scope names, and reads and
// withdraws only the requests it asked, unless its scope says answer:
// then it also lists, watches and answers what is pending in those chats.

// Credential is who a request comes from.
type Credential struct {
	// Name is the token's name: "web" for the page's, else its name in
	// LEASHD_API_TOKENS. Answers given with it carry it as who answered.
	Name  string
	page  bool
	scope config.APIToken
}

// Page reports whether it is the page's token, which may do everything.
func (c Credential) Page() bool { return c.page }

// MayAsk reports whether it may ask in chat.
func (c Credential) MayAsk(chat string) bool { return c.page || c.scope.MayAsk(chat) }

// MayAnswer reports whether it may see and answer everything pending in
// chat.
func (c Credential) MayAnswer(chat string) bool {
	return c.page || c.scope.Answer && c.scope.MayAsk(chat)
}

// Asker is what requests it asks carry as their Asker: "api" for the
// page's token (the engine's default), "api:<name>" for a program's, so
// that each program finds its own requests, after a restart too.
func (c Credential) Asker() string {
	if c.page {
		return "api"
	}
	return "api:" + c.Name
}

// MaySee reports whether it may read (and withdraw) it: its own request,
// or one in a chat it answers in.
func (c Credential) MaySee(it interactions.Interaction) bool {
	return c.page || it.Asker == c.Asker() || c.MayAnswer(it.ChatID)
}

// ScopeError is the message of a 403 for a chat outside its scope.
func (c Credential) ScopeError(chat, what string) string {
	return fmt.Sprintf("the token %q may not %s in chat %s: its scope (LEASHD_API_TOKENS) is %s", c.Name, what, quoteShort(chat), c.scope.Scope())
}

type credentialKey struct{}

// CredentialFrom returns the credential RequireToken or RequireCredential
// found on the request whose context ctx is; ok is false outside them.
func CredentialFrom(ctx context.Context) (Credential, bool) {
	c, ok := ctx.Value(credentialKey{}).(Credential)
	return c, ok
}

// WithCredential puts c on ctx, as RequireCredential does (tests).
func WithCredential(ctx context.Context, c Credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// Credentials are every token the API and /mcp take, and how fast each
// may post. Build them with NewCredentials; one set is shared by the
// page's routes and /mcp, so that each token has one budget.
type Credentials struct {
	page      string
	tokenFile string
	programs  []config.APIToken
	limits    map[string]*rate.Limiter // by credential name; none: no limit
	rate      float64
	burst     int
}

// NewCredentials returns the page's token (tokenFile: where leashd keeps
// it when it generated it) and the programs' scoped tokens; perSecond > 0
// paces each credential's POSTs to that rate with burst at once.
func NewCredentials(page, tokenFile string, programs []config.APIToken, perSecond float64, burst int) *Credentials {
	cs := &Credentials{page: page, tokenFile: tokenFile, programs: programs, rate: perSecond, burst: max(burst, 1)}
	if perSecond > 0 {
		cs.limits = map[string]*rate.Limiter{webUser: rate.NewLimiter(rate.Limit(perSecond), cs.burst)}
		for _, p := range programs {
			cs.limits[p.Name] = rate.NewLimiter(rate.Limit(perSecond), cs.burst)
		}
	}
	return cs
}

// match returns the credential whose token got is, comparing with every
// token in constant time.
func (cs *Credentials) match(got string) (Credential, bool) {
	var found Credential
	ok := false
	if cs.page != "" && tokenOK(got, cs.page) {
		found, ok = Credential{Name: webUser, page: true}, true
	}
	for _, p := range cs.programs {
		if tokenOK(got, p.Token) && !ok {
			found, ok = Credential{Name: p.Name, scope: p}, true
		}
	}
	return found, ok
}

// RequireCredential puts h behind the API's rules (see RequireToken) with
// every token of cs; the request's context then carries its Credential
// (CredentialFrom), and a POST beyond the credential's rate is refused
// with 429.
func RequireCredential(cs *Credentials, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := sameOrigin(r); err != nil {
				writeError(w, http.StatusForbidden, err.Error())
				return
			}
		}
		if cs.page == "" && len(cs.programs) == 0 {
			writeError(w, http.StatusUnauthorized, "this server has no API token, so it answers no API request: set LEASHD_WEB_TOKEN, or let leashd generate one")
			return
		}
		cred, ok := cs.check(w, r)
		if !ok {
			return
		}
		if r.Method == http.MethodPost && !cs.allow(w, cred) {
			return
		}
		next.ServeHTTP(w, r.WithContext(WithCredential(r.Context(), cred)))
	})
}

// allow takes one POST from cred's budget, or answers 429 with when to
// try again.
func (cs *Credentials) allow(w http.ResponseWriter, cred Credential) bool {
	l := cs.limits[cred.Name]
	if l == nil {
		return true
	}
	res := l.Reserve()
	d := res.Delay()
	if d == 0 {
		return true
	}
	res.Cancel()
	secs := max(1, int(math.Ceil(d.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests from the token %q: at most %g POSTs a second on average (LEASHD_API_RATE), %d at once (LEASHD_API_BURST); try again in %d s",
		cred.Name, cs.rate, cs.burst, secs))
	return false
}

// check answers 401 unless r carries one of the tokens, as a bearer token
// or the page's cookie, and returns whose it is.
func (cs *Credentials) check(w http.ResponseWriter, r *http.Request) (Credential, bool) {
	got, how := "", ""
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			writeError(w, http.StatusUnauthorized, "unsupported Authorization scheme "+quoteShort(scheme)+": send Authorization: Bearer <token>; "+whereToken(cs.tokenFile))
			return Credential{}, false
		}
		got, how = strings.TrimSpace(tok), "bearer token"
	} else if ck, err := r.Cookie(cookieName); err == nil {
		got, how = ck.Value, "token cookie (open the address with ?token= that leashd printed at start-up again)"
	}
	if how == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leashd"`)
		page := "open /?token=<token> in the browser"
		if cs.tokenFile != "" {
			page += " (leashd prints that address at start-up)"
		}
		writeError(w, http.StatusUnauthorized, "a token is required: send Authorization: Bearer <token>, or "+page+"; "+whereToken(cs.tokenFile))
		return Credential{}, false
	}
	cred, ok := cs.match(got)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leashd", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "wrong "+how)
		return Credential{}, false
	}
	httpserver.MarkAuthed(r)
	return cred, true
}

// credential is the request's credential; without one (a handler reached
// without RequireCredential, as in tests of the handlers alone) it is the
// page's.
func credential(r *http.Request) Credential {
	if c, ok := CredentialFrom(r.Context()); ok {
		return c
	}
	return Credential{Name: webUser, page: true}
}

// pageOnly answers 403 unless the request comes with a token that may
// answer in chat ("" : in every chat, which only the page's token may).
func pageOnly(w http.ResponseWriter, r *http.Request, chat, what string) bool {
	c := credential(r)
	if c.page || chat != "" && c.MayAnswer(chat) {
		return true
	}
	if chat == "" {
		writeError(w, http.StatusForbidden, fmt.Sprintf("the token %q may not %s: only the page's token (LEASHD_WEB_TOKEN) may, or a token whose scope says answer, with ?chat= in its scope (%s)", c.Name, what, c.scope.Scope()))
		return false
	}
	writeError(w, http.StatusForbidden, c.ScopeError(chat, what))
	return false
}

// retryAfter is how long a client waits after a refusal for load.
const retryAfter = 5 * time.Second

// WithCredentials sets every token the API takes (the page's and the
// programs'), instead of WithToken and WithTokenFile alone.
func WithCredentials(cs *Credentials) Option { return func(c *Connector) { c.creds = cs } }

// watching lets through the page's token, and a token that answers in the
// chat of ?chat= (the event stream and the chat list show every chat
// otherwise).
func (c *Connector) watching(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pageOnly(w, r, r.URL.Query().Get("chat"), "watch chats") {
			h(w, r)
		}
	}
}

// pageOnly lets through the page's token alone: the chat list names
// every chat.
func (c *Connector) pageOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pageOnly(w, r, "", "list every chat") {
			h(w, r)
		}
	}
}

// messaging lets through the page's token, and a token that answers in
// the chat messaged.
func (c *Connector) messaging(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if pageOnly(w, r, r.PathValue("chat"), "send messages") {
			h(w, r)
		}
	}
}

// answering lets through the page's token, and a token that answers in
// the chat of the pending interaction {id}.
func (c *Connector) answering(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cred := credential(r)
		if cred.page {
			h(w, r)
			return
		}
		hd, ok := c.h(w)
		if !ok {
			return
		}
		id := r.PathValue("id")
		for _, it := range hd.Pending("") {
			if it.ID != id {
				continue
			}
			if pageOnly(w, r, it.ChatID, "answer") {
				h(w, r)
			}
			return
		}
		if !cred.scope.Answer {
			writeError(w, http.StatusForbidden, fmt.Sprintf("the token %q may not answer: its scope (LEASHD_API_TOKENS) is %s, without answer", cred.Name, cred.scope.Scope()))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no pending interaction %s", quoteShort(id)))
	}
}

// mayRead answers 403 unless the request's credential may read the
// program request id (its own, or one in a chat it answers in); a
// request it may not read is not looked for further.
func (c *Connector) mayRead(w http.ResponseWriter, r *http.Request, a programAsker, id, what string) bool {
	cred := credential(r)
	if cred.page {
		return true
	}
	ctx, cancel := context.WithCancel(r.Context())
	cancel() // only what is known now: no waiting
	it, _, _, err := a.Outcome(ctx, id)
	if err != nil {
		writeError(w, statusOf(err), err.Error())
		return false
	}
	if !cred.MaySee(it) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("the token %q may not %s %s: another program asked it, and its scope (LEASHD_API_TOKENS: %s) does not answer in chat %s",
			cred.Name, what, quoteShort(id), cred.scope.Scope(), quoteShort(it.ChatID)))
		return false
	}
	return true
}
