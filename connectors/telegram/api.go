package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// api is the part of the Bot API leashd uses. Every call carries a context
// (the library's requests have none: see ctxClient).
type api interface {
	request(ctx context.Context, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error)
	send(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error)
	// getUpdates long-polls and hands each update to each, in order, as
	// soon as it is decoded; an error may come after some were handed.
	getUpdates(ctx context.Context, cfg tgbotapi.UpdateConfig, each func(tgbotapi.Update)) error
	makeRequest(ctx context.Context, endpoint string, params tgbotapi.Params) (*tgbotapi.APIResponse, error)
}

// httpClient is what the connector sends requests with (an *http.Client).
type httpClient interface {
	Do(req *http.Request) (*http.Response, error)
}

// ctxClient gives the library's context-free requests a context.
type ctxClient struct {
	ctx context.Context
	c   httpClient
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) { return c.c.Do(r.WithContext(c.ctx)) }

// libAPI adapts the frozen v5.5.1 library. Each call works on a shallow
// copy of the BotAPI whose client carries the call's context, so calls can
// be cancelled and run concurrently.
type libAPI struct {
	bot      *tgbotapi.BotAPI
	client   httpClient
	token    string
	endpoint string // the library's "…/bot%s/%s"
}

// dial creates the library's BotAPI (which calls getMe at once).
func dial(ctx context.Context, token, baseURL string, client httpClient) (*libAPI, tgbotapi.User, error) {
	endpoint := strings.TrimRight(baseURL, "/") + "/bot%s/%s"
	bot, err := tgbotapi.NewBotAPIWithClient(token, endpoint, ctxClient{ctx, client})
	if err != nil {
		return nil, tgbotapi.User{}, redact(err, token)
	}
	bot.Client = client
	return &libAPI{bot: bot, client: client, token: token, endpoint: endpoint}, bot.Self, nil
}

func (l *libAPI) with(ctx context.Context) *tgbotapi.BotAPI {
	b := *l.bot
	b.Client = ctxClient{ctx, l.client}
	return &b
}

func (l *libAPI) request(ctx context.Context, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	r, err := l.with(ctx).Request(c)
	return r, redact(err, l.token)
}

func (l *libAPI) send(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	// Send unmarshals the result as a Message; editMessageReplyMarkup on an
	// inline message returns true, which Request handles.
	resp, err := l.with(ctx).Request(c)
	if err != nil {
		return tgbotapi.Message{}, redact(err, l.token)
	}
	var m tgbotapi.Message
	_ = json.Unmarshal(resp.Result, &m) // "true" for some edits: no message
	return m, nil
}

// getUpdates is the library's GetUpdates without its two passes over the
// answer (it decodes the whole answer, then decodes the result again) and
// without making the first update wait for the last: the answer is decoded
// as it is read, and each update is handed on as soon as it is decoded.
// The request is the library's (form-encoded POST); an answer that is not
// ok is a *tgbotapi.Error, as from the library.
func (l *libAPI) getUpdates(ctx context.Context, cfg tgbotapi.UpdateConfig, each func(tgbotapi.Update)) error {
	form := url.Values{}
	if cfg.Offset != 0 {
		form.Set("offset", strconv.Itoa(cfg.Offset))
	}
	if cfg.Limit != 0 {
		form.Set("limit", strconv.Itoa(cfg.Limit))
	}
	if cfg.Timeout != 0 {
		form.Set("timeout", strconv.Itoa(cfg.Timeout))
	}
	if cfg.AllowedUpdates != nil {
		b, err := json.Marshal(cfg.AllowedUpdates)
		if err != nil {
			return err
		}
		form.Set("allowed_updates", string(b))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf(l.endpoint, l.token, "getUpdates"), strings.NewReader(form.Encode()))
	if err != nil {
		return redact(err, l.token)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := l.client.Do(req)
	if err != nil {
		return redact(err, l.token)
	}
	defer resp.Body.Close()
	if err := decodeUpdates(resp.Body, each); err != nil {
		return redact(err, l.token)
	}
	return nil
}

// decodeUpdates reads a getUpdates answer, handing each update of its
// result to each as it is decoded. An update that is well-formed JSON but
// not an update as the library reads it (a field of another type) is handed
// on with only its update_id, so that it is confirmed and skipped rather
// than asked for again and again, stalling every update behind it; the
// answer's error is then a *badUpdatesError naming it.
func decodeUpdates(r io.Reader, each func(tgbotapi.Update)) error {
	dec := json.NewDecoder(r)
	var (
		ok     bool
		apiErr tgbotapi.Error
		bad    badUpdatesError
	)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fmt.Errorf("telegram: reading the getUpdates answer: %w", err)
		}
		switch key {
		case "ok":
			err = dec.Decode(&ok)
		case "error_code":
			err = dec.Decode(&apiErr.Code)
		case "description":
			err = dec.Decode(&apiErr.Message)
		case "parameters":
			var p *tgbotapi.ResponseParameters
			if err = dec.Decode(&p); p != nil {
				apiErr.ResponseParameters = *p
			}
		case "result":
			if err = expectDelim(dec, '['); err != nil {
				return err
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fmt.Errorf("telegram: reading an update of the getUpdates answer: %w", err)
				}
				u, err := readUpdate(raw)
				var skipped *badUpdatesError
				if errors.As(err, &skipped) {
					bad = append(bad, *skipped...)
				} else if err != nil {
					return fmt.Errorf("telegram: an update of the getUpdates answer: %w", err)
				}
				each(u)
			}
			err = expectDelim(dec, ']')
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fmt.Errorf("telegram: reading the getUpdates answer (%v): %w", key, err)
		}
	}
	if !ok {
		return &apiErr
	}
	if len(bad) > 0 {
		return &bad
	}
	return nil
}

// readUpdate reads one update Telegram sent (a getUpdates result's
// element, a webhook's body). One that is well-formed JSON with an
// update_id but not readable as an update comes back with only that
// update_id and a *badUpdatesError: the caller confirms it and goes on
// (Telegram would otherwise send it, and every update queued behind it,
// again and again). Anything else unreadable is an error.
func readUpdate(raw []byte) (tgbotapi.Update, error) {
	var u tgbotapi.Update
	err := json.Unmarshal(raw, &u)
	if err == nil {
		return u, nil
	}
	var id struct {
		UpdateID *int `json:"update_id"`
	}
	if json.Unmarshal(raw, &id) != nil || id.UpdateID == nil {
		return u, fmt.Errorf("not an update (no update_id): %w", err)
	}
	return tgbotapi.Update{UpdateID: *id.UpdateID}, &badUpdatesError{fmt.Errorf("update %d skipped: %w", *id.UpdateID, err)}
}

// badUpdatesError lists the updates Telegram sent that could not be read;
// they were skipped, every other update was handled.
type badUpdatesError []error

func (e *badUpdatesError) Error() string {
	msgs := make([]string, len(*e))
	for i, err := range *e {
		msgs[i] = err.Error()
	}
	return "telegram: updates Telegram sent that leashd cannot read: " + strings.Join(msgs, "; ")
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("telegram: reading the getUpdates answer: %w", err)
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("telegram: the getUpdates answer is not what the Bot API sends: %v where %v was expected", t, want)
	}
	return nil
}

func (l *libAPI) makeRequest(ctx context.Context, endpoint string, params tgbotapi.Params) (*tgbotapi.APIResponse, error) {
	r, err := l.with(ctx).MakeRequest(endpoint, params)
	return r, redact(err, l.token)
}

// apiError is a library error with the token removed from its text. It
// unwraps to the *tgbotapi.Error (which never holds the URL) and to
// context errors, never to the *url.Error that holds the token.
type apiError struct {
	msg   string
	api   *tgbotapi.Error
	cause error // context.Canceled / DeadlineExceeded, when that is why
}

func (e *apiError) Error() string { return e.msg }

func (e *apiError) Unwrap() []error {
	var out []error
	if e.api != nil {
		out = append(out, e.api)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// redact removes the token from err's text; the library puts the request
// URL, token included, into network errors.
func redact(err error, token string) error {
	if err == nil {
		return nil
	}
	e := &apiError{msg: redactString(err.Error(), token)}
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		e.api = te
		e.msg = fmt.Sprintf("telegram: %d %s", te.Code, redactString(te.Message, token))
	}
	switch {
	case errors.Is(err, context.Canceled):
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		e.cause = context.DeadlineExceeded
	}
	return e
}

func redactString(s, token string) string {
	if token == "" {
		return s
	}
	s = strings.ReplaceAll(s, token, "<token>")
	// A token is "<bot id>:<secret>"; the secret alone must not leak either.
	if _, secret, ok := strings.Cut(token, ":"); ok && len(secret) >= 8 {
		s = strings.ReplaceAll(s, secret, "<token>")
	}
	return s
}

// apiCode returns the Bot API error code of err (0 when it is not one) and
// the retry_after it carries.
func apiCode(err error) (code, retryAfter int, desc string) {
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		return te.Code, te.RetryAfter, te.Message
	}
	return 0, 0, ""
}

// notModified reports the 400 Telegram gives for an edit that changes
// nothing: the message already shows what we wanted, so it is success.
func notModified(err error) bool {
	code, _, desc := apiCode(err)
	return code == 400 && strings.Contains(desc, "message is not modified")
}
