package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/leashd/leashd/interactions/client"
)

// awayUsage is printed by `leashd away -h` and after a bad flag.
const awayUsage = `Usage: leashd away on|off|status [--chat CHAT] [--url URL] [--token T]

Tells the running leashd whether you are away from your desk. Away, the
Claude Code sessions in your terminal that have leashd's hooks (leashd hook
install) ask in CHAT: permission dialogs as buttons, and a finished
session's last message, answered by what you type next. off (back at the
desk) returns whatever is still waiting in the chat to the terminal. In the
chat, /away and /back do the same.

Flags:
  --chat CHAT   the chat (default: as leashd hook install: the first allowed
                Telegram user's private chat, else the web chat "desk")
  --url URL     leashd's address (default http://$LEASHD_WEB_ADDR)
  --token T     the API token (default as leashd ask finds it)
`

// runAway is `leashd away`.
func runAway(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, awayUsage)
		return errUsage
	}
	verb := args[0]
	fs := flag.NewFlagSet("leashd away", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	chat := fs.String("chat", "", "")
	url := fs.String("url", "", "")
	token := fs.String("token", "", "")
	err := fs.Parse(args[1:])
	switch {
	case verb == "-h" || verb == "--help" || errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, awayUsage)
		return nil
	case err != nil:
		return fmt.Errorf("leashd away: %w (see leashd away -h)", err)
	case verb != "on" && verb != "off" && verb != "status":
		return fmt.Errorf("leashd away: %q is not on, off or status", verb)
	case fs.NArg() > 0:
		return fmt.Errorf("leashd away: unexpected argument %q (see leashd away -h)", fs.Arg(0))
	}
	if *chat == "" {
		*chat = defaultHookChat(cfg)
	}
	if *url == "" {
		u, err := apiURL(cfg)
		if err != nil {
			return fmt.Errorf("leashd away: %w", err)
		}
		*url = u
	}
	tok, err := clientToken(cfg, *token)
	if err != nil {
		return fmt.Errorf("leashd away: %w", err)
	}
	c := client.New(*url, tok)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var st client.AwayState
	if verb == "status" {
		st, err = c.Away(rctx, *chat)
	} else {
		st, err = c.SetAway(rctx, *chat, verb == "on")
	}
	if err != nil {
		return fmt.Errorf("leashd away: %w", err)
	}
	switch {
	case st.Away:
		fmt.Fprintf(stdout, "Away from the desk (%s): your terminal's Claude Code sessions with leashd's hooks ask there.\n", st.ChatID)
	default:
		fmt.Fprintf(stdout, "At the desk (%s): the terminal asks; nothing is relayed.\n", st.ChatID)
		if st.Released > 0 {
			fmt.Fprintf(stdout, "%d request(s) waiting in the chat went back to the terminal.\n", st.Released)
		}
	}
	return nil
}
