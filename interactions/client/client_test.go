package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/httpserver"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// leashdDB is a running leashd on addr with its journal in db.
func leashdDB(t *testing.T, addr, db string) (url string, coord *interactions.Coordinator, stop func()) {
	st, err := sqlite.Open(context.Background(), db)
	require.NoError(t, err)
	coord = interactions.New(interactions.WithJournal(st))
	eng := enginetest.New(demo.New(), coord, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 2 * time.Second }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	url, stopServing := serveWeb(eng, ln, token)
	return url, coord, func() {
		require.NoError(t, stopServing())
		require.NoError(t, st.Close())
	}
}

// serveWeb runs eng with the web connector on leashd's HTTP server on ln,
// as cmd/leashd does; stop shuts both down and returns the engine's error.
func serveWeb(eng *engine.Engine, ln net.Listener, token string) (url string, stop func() error) {
	srv := httpserver.New(httpserver.Options{Listener: ln})
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	w := web.New(web.WithURL(srv.URL()), web.WithToken(token))
	if err := srv.Mount(w); err != nil {
		panic(err)
	}
	eng.AddConnector(w)
	ctx, cancel := context.WithCancel(context.Background())
	done, served := make(chan error, 1), make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	go func() { done <- eng.Run(ctx) }()
	for w.Ready() != nil || srv.Ready() != nil {
		time.Sleep(time.Millisecond)
	}
	return srv.URL(), func() error {
		cancel()
		err := <-done
		srv.Drain()
		return errors.Join(err, <-served)
	}
}

// A question asked before leashd restarts is answered after the restart:
// the waiting client reconnects and gets the answer.
func TestLongPollReconnectsAfterARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leashd.db")
	url, coord, stop := leashdDB(t, "127.0.0.1:0", db)
	c := client.New(url, token, client.WithRetry(20*time.Millisecond))
	type result struct {
		resp interactions.InputResponse
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := c.RequestInput(context.Background(), interactions.InputRequest{ChatID: "ops", Prompt: "Roll back?",
			Options: []interactions.Choice{{Label: "Roll back"}, {Label: "Keep"}, {Label: "Page me"}}})
		got <- result{resp, err}
	}()
	require.Eventually(t, func() bool { return len(coord.Pending("ops")) == 1 }, 10*time.Second, time.Millisecond)
	id := coord.Pending("ops")[0].ID
	stop() // the long-poll in flight ends; the client keeps trying

	_, _, stop = leashdDB(t, strings.TrimPrefix(url, "http://"), db)
	defer stop()
	req, err := http.NewRequest("POST", url+"/api/interactions/"+id+"/reply", strings.NewReader(`{"answers":[["Keep"]]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	select {
	case r := <-got:
		require.NoError(t, r.err)
		assert.Equal(t, interactions.InputResponse{Value: "Keep", By: "web"}, r.resp)
	case <-time.After(20 * time.Second):
		t.Fatal("the client did not get the answer given after the restart")
	}
}

// leashd is a running leashd (engine, demo agent, web API) for tests and
// examples; stop it with the returned function.
func leashd(token string, opts ...interactions.Opt) (url string, coord *interactions.Coordinator, stop func()) {
	coord = interactions.New(opts...)
	eng := enginetest.New(demo.New(), coord, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 2 * time.Second })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	url, stopServing := serveWeb(eng, ln, token)
	return url, coord, func() { _ = stopServing() }
}

// answer replies to the next interaction asked in chat.
func answer(coord *interactions.Coordinator, chat string, r interactions.Reply) <-chan error {
	errc := make(chan error, 1)
	go func() {
		for {
			if p := coord.Pending(chat); len(p) > 0 {
				_, err := coord.Reply(p[0].ID, r)
				errc <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return errc
}

const token = "a-long-enough-test-token"

// The Go client's question is answered on the web API, as the page does.
func TestRequestInputAnsweredThroughTheAPI(t *testing.T) {
	url, coord, stop := leashd(token)
	defer stop()
	c := client.New(url, token)
	replied := make(chan string, 1)
	go func() {
		for len(coord.Pending("ops")) == 0 {
			time.Sleep(2 * time.Millisecond)
		}
		req, _ := http.NewRequest("POST", url+"/api/interactions/"+coord.Pending("ops")[0].ID+"/reply", strings.NewReader(`{"answers":[["Deploy"]]}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			replied <- err.Error()
			return
		}
		resp.Body.Close()
		replied <- resp.Status
	}()
	resp, err := c.RequestInput(context.Background(), interactions.InputRequest{
		ChatID: "ops", Header: "Release", Prompt: "Deploy v2?",
		Options: []interactions.Choice{{Label: "Deploy"}, {Label: "Wait"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "204 No Content", <-replied)
	assert.Equal(t, interactions.InputResponse{Value: "Deploy", By: "web"}, resp)

	// Free text, and a rejection with its reason.
	errc := answer(coord, "ops", interactions.Reply{By: "ann", Text: "v2.1"})
	resp, err = c.RequestInput(context.Background(), interactions.InputRequest{ChatID: "ops", Prompt: "Which tag?"})
	require.NoError(t, err)
	require.NoError(t, <-errc)
	assert.Equal(t, "v2.1", resp.Value)
	errc = answer(coord, "ops", interactions.Reply{By: "bob", Reject: true, Text: "freeze"})
	resp, err = c.RequestInput(context.Background(), interactions.InputRequest{ChatID: "ops", Prompt: "Which tag?"})
	require.NoError(t, err)
	require.NoError(t, <-errc)
	assert.Equal(t, interactions.InputResponse{Rejected: true, Reason: "freeze", By: "bob"}, resp)
}

// The flows: questions one at a time with their position, a plan review,
// a tool approval.
func TestFlowsThroughTheAPI(t *testing.T) {
	url, coord, stop := leashd(token)
	defer stop()
	c := client.New(url, token)
	go func() {
		for _, r := range []interactions.Reply{{Answers: []string{"SQLite"}}, {Answers: []string{"Auth", "Search"}}} {
			var it interactions.Interaction
			for {
				if p := coord.Pending("c"); len(p) > 0 {
					it = p[0]
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			if it.MultiSelect {
				for _, l := range r.Answers {
					_, _ = coord.Toggle(it.ID, l, interactions.Reply{})
				}
				_ = coord.Confirm(it.ID, interactions.Reply{By: "ann"})
				continue
			}
			_, _ = coord.Reply(it.ID, r)
		}
	}()
	res, err := c.Ask(context.Background(), "c", []interactions.Question{
		{Question: "Which database?", Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}},
		{Question: "Which features?", MultiSelect: true, Options: []interactions.Choice{{Label: "Auth"}, {Label: "Search"}, {Label: "Billing"}}},
	})
	require.NoError(t, err)
	assert.True(t, res.Complete())
	assert.Equal(t, map[string]string{"Which database?": "SQLite", "Which features?": "Auth, Search"}, res.Answers)
	require.Len(t, res.Asked, 2)
	assert.Equal(t, 2, res.Asked[1].Index)

	errc := answer(coord, "c", interactions.Reply{Answers: []string{interactions.DecisionEdit}})
	_, r, err := c.ReviewPlan(context.Background(), "c", "# Plan\n1. do it")
	require.NoError(t, err)
	require.NoError(t, <-errc)
	assert.Equal(t, interactions.StatusAnswered, r.Status)
	assert.Equal(t, interactions.DecisionEdit, r.Decision)

	errc = answer(coord, "c", interactions.Reply{Text: "not now"})
	_, r, err = c.ApproveTool(context.Background(), "c", "Bash", json.RawMessage(`{"command":"rm -rf build"}`), "rm -rf build")
	require.NoError(t, err)
	require.NoError(t, <-errc)
	assert.Equal(t, interactions.StatusRejected, r.Status)
	assert.Equal(t, "not now", r.Text)
}

// Cancelling the context cancels the interaction in leashd.
func TestContextCancelCancelsTheInteraction(t *testing.T) {
	url, coord, stop := leashd(token)
	defer stop()
	events, unsub := coord.Subscribe()
	defer unsub()
	c := client.New(url, token)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(coord.Pending("c")) == 0 {
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.RequestInput(ctx, interactions.InputRequest{ChatID: "c", Prompt: "Name?"})
	require.ErrorIs(t, err, interactions.ErrCancelled)
	require.ErrorIs(t, err, context.Canceled)
	for ev := range events {
		if ev.Type == interactions.EventResolved {
			assert.Equal(t, interactions.StatusCancelled, ev.Resolution.Status)
			assert.Equal(t, "The program that asked cancelled the request.", ev.Resolution.Text)
			break
		}
	}
	assert.Empty(t, coord.Pending(""))
}

// No answer in time is ErrExpired; bad input and a wrong token are errors
// naming the problem.
func TestTimeoutAndBadInput(t *testing.T) {
	url, _, stop := leashd(token)
	defer stop()
	c := client.New(url, token, client.WithTimeout(time.Second))
	_, err := c.RequestInput(context.Background(), interactions.InputRequest{ChatID: "c", Prompt: "Name?"})
	require.ErrorIs(t, err, interactions.ErrExpired)
	assert.Contains(t, err.Error(), "No answer came within 1s")

	_, err = c.RequestInput(context.Background(), interactions.InputRequest{ChatID: "c", Prompt: " "})
	var apiErr *client.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusBadRequest, apiErr.Status)
	assert.Equal(t, "question: missing: the text to ask", apiErr.Message)

	_, err = client.New(url, "wrong-token").RequestInput(context.Background(), interactions.InputRequest{ChatID: "c", Prompt: "Name?"})
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusUnauthorized, apiErr.Status)
}

// Another Go agent asks a person through a running leashd.
func ExampleClient_RequestInput() {
	url, coord, stop := leashd(token) // a running leashd; normally http://127.0.0.1:8080
	defer stop()
	answer(coord, "telegram-less-demo", interactions.Reply{By: "ann", Answers: []string{"Deploy"}}) // a tap in the chat

	c := client.New(url, token)
	resp, err := c.RequestInput(context.Background(), interactions.InputRequest{
		ChatID: "telegram-less-demo", Prompt: "Deploy v2 to production?",
		Options: []interactions.Choice{{Label: "Deploy"}, {Label: "Wait"}},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%s (by %s)\n", resp.Value, resp.By)
	// Output: Deploy (by ann)
}
