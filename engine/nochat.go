package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// noChat is interactions.ErrNoPresenter (errors.Is still finds it) in the
// words the person or program that named the chat reads: the API returns
// it as text, `leashd ask` prints it. It says which chats this leashd
// does have.
type noChat struct {
	chat   string
	served []string // the connected chat apps' names
}

func (e noChat) Unwrap() error { return interactions.ErrNoPresenter }

func (e noChat) Error() string {
	msg := fmt.Sprintf("there is no chat %q here", e.chat)
	if app := connectors.ChatPrefix(e.chat); app != "" && slices.Contains(appPrefixes, app) {
		msg += fmt.Sprintf(": %s is not connected to this leashd", appNames[app])
	}
	var kinds []string
	for _, name := range e.served {
		switch name {
		case "telegram":
			kinds = append(kinds, "telegram:<chat ID>")
		case "slack":
			kinds = append(kinds, "slack:<channel ID>")
		case "terminal":
			kinds = append(kinds, "terminal:<name>")
		}
	}
	if slices.Contains(e.served, "web") {
		kinds = append(kinds, "web page chats (any other name)")
	}
	switch len(kinds) {
	case 0:
		return msg + "; no chat app is connected"
	case 1:
		return msg + "; this leashd serves " + kinds[0]
	}
	return msg + "; this leashd serves " + strings.Join(kinds[:len(kinds)-1], ", ") + " and " + kinds[len(kinds)-1]
}

// appNames are the chat apps as people call them.
var appNames = map[string]string{"telegram": "Telegram", "slack": "Slack", "terminal": "the terminal"}

// noChatErrLocked is noChat for chatID, listing the chat apps connected now.
// The caller holds e.mu.
func (e *Engine) noChatErrLocked(chatID string) error {
	var served []string
	for name := range e.owners {
		served = append(served, name)
	}
	slices.Sort(served)
	return noChat{chat: chatID, served: served}
}
