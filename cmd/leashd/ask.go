package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// askUsage is printed by `leashd ask -h` and after a bad flag.
const askUsage = `Usage: leashd ask [--url URL] [--token T] --chat CHAT [--option LABEL]... [--multi] [--approval] [--header H] [--timeout 10m] "question"

Asks a person through a running leashd and prints the answer: the question
is shown in CHAT (telegram:<chat id>, slack:<channel>, or a web chat name)
like any other, and the first answer there wins. No --option: free text.
With --approval: an approve/reject gate, Approve and Reject unless two
--option flags name them (the first approves).

Prints the answer on one line (labels joined with ", ") and exits
  0  answered
  1  rejected (the reason on stderr)
  2  expired, or cancelled (Ctrl+C cancels the question)
  3  an error (bad input, leashd unreachable, wrong token)

Flags:
  --url URL       leashd's address (default http://$LEASHD_WEB_ADDR)
  --token T       the API token (default $LEASHD_WEB_TOKEN, else the token
                  leashd generated: web-token beside LEASHD_DB_PATH)
  --chat CHAT     where to ask (required)
  --option LABEL  an option to choose from; repeat for more
  --multi         several options may be chosen
  --approval      approve or reject: Approve/Reject, or two --option
                  flags (the first approves, the second rejects)
  --header H      a short title
  --timeout D     how long to wait for an answer, e.g. 90s or 10m (default
                  LEASHD_APPROVAL_TIMEOUT_SECONDS of the running leashd)
`

// exitCode ends the process with this code; whatever it had to say was
// said already.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit code %d", int(e)) }

// Exit codes of `leashd ask`.
const (
	askAnswered exitCode = 0
	askRejected exitCode = 1
	askNoAnswer exitCode = 2
	askError    exitCode = 3
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// defaultURL is the web address as a URL for this machine.
func defaultURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// apiURL is the address of this configuration's HTTP API, for the
// commands that talk to a running leashd without --url.
func apiURL(cfg settings) (string, error) {
	switch {
	case !cfg.web.Serves():
		return "", errors.New("LEASHD_WEB_ADDR is off: give leashd's address with --url")
	case !cfg.web.PageOn():
		return "", errors.New("LEASHD_WEB_PAGE is off, so this leashd serves no /api: give the address of one that does with --url")
	}
	return defaultURL(cfg.web.Addr), nil
}

// runAsk is `leashd ask`. It returns an exitCode (nil: answered).
func runAsk(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("leashd ask", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("url", "", "")
	token := fs.String("token", "", "")
	chat := fs.String("chat", "", "")
	header := fs.String("header", "", "")
	multi := fs.Bool("multi", false, "")
	approval := fs.Bool("approval", false, "")
	timeout := fs.Duration("timeout", 0, "")
	var options listFlag
	fs.Var(&options, "option", "")
	fail := func(msg string) error {
		fmt.Fprintln(stderr, "leashd ask: "+msg)
		fmt.Fprint(stderr, "\n"+askUsage)
		return askError
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, askUsage)
			return nil
		}
		return fail(err.Error())
	}
	question := strings.TrimSpace(strings.Join(fs.Args(), " "))
	switch {
	case *chat == "":
		return fail("--chat is required: where to ask, e.g. --chat telegram:42")
	case question == "":
		return fail(`the question is missing: leashd ask --chat CHAT "question"`)
	case *timeout < 0 || *timeout > 7*24*time.Hour:
		return fail(fmt.Sprintf("--timeout %s is out of range: 0 (leashd's default) to 168h", *timeout))
	case *approval && (len(options) != 0 && len(options) != 2 || *multi):
		return fail(fmt.Sprintf("--approval takes no --option (Approve/Reject) or exactly two (the approving one first), and no --multi; got %d options", len(options)))
	case *multi && len(options) == 0:
		return fail("--multi needs --option flags to choose from")
	}
	if *url == "" {
		u, err := apiURL(cfg)
		if err != nil {
			return fail(err.Error())
		}
		*url = u
	}
	req := client.Request{ChatID: *chat, Kind: "question", Question: question, Header: *header, MultiSelect: *multi,
		TimeoutSeconds: int((*timeout + time.Second - 1) / time.Second)}
	for _, o := range options {
		req.Options = append(req.Options, interactions.Choice{Label: o})
	}
	switch {
	case *approval:
		req.Kind = "approval"
	case len(options) == 0:
		req.Kind = "text"
	}
	tok, err := clientToken(cfg, *token)
	if err != nil {
		fmt.Fprintln(stderr, "leashd ask:", err)
		return askError
	}
	o, err := client.New(*url, tok).Ask1(ctx, req)
	switch {
	case errors.Is(err, interactions.ErrCancelled):
		fmt.Fprintln(stderr, "leashd ask: cancelled; the question was withdrawn")
		return askNoAnswer
	case err != nil:
		fmt.Fprintln(stderr, "leashd ask:", err)
		return askError
	}
	return printOutcome(o, stdout, stderr)
}

// printOutcome prints the answer on stdout and anything else on stderr,
// and returns the exit code that says how the question ended.
func printOutcome(o client.Outcome, stdout, stderr io.Writer) error {
	switch {
	case o.Status == string(interactions.StatusAnswered) && o.Approved:
		fmt.Fprintln(stdout, oneLine(o.Answer))
		return nil
	case o.Status == string(interactions.StatusAnswered), o.Status == string(interactions.StatusRejected):
		// Rejected outright, or the rejecting option of an approval.
		why := o.Text
		if why == "" {
			why = o.Answer
		}
		if o.Answer != "" && o.Status == string(interactions.StatusAnswered) {
			fmt.Fprintln(stdout, oneLine(o.Answer))
		}
		fmt.Fprintln(stderr, "leashd ask: rejected: "+oneLine(orText(why, interactions.RejectedText)))
		return askRejected
	default:
		fmt.Fprintf(stderr, "leashd ask: %s: %s\n", o.Status, oneLine(o.Text))
		return askNoAnswer
	}
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// oneLine puts text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
