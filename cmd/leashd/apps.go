package main

import (
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/discord"
	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/web"
)

// chatApps are the chat apps leashd is built with, in the order their
// connectors are added to the engine (the web page last: it shows every
// chat). A chat app is a package under connectors/ implementing
// connectors.App and one line here; cmd reads, checks, builds and mounts
// it from that alone.
func chatApps() []connectors.App {
	return []connectors.App{
		&telegram.App{},
		&slack.App{},
		&discord.App{},
		&web.App{},
	}
}
