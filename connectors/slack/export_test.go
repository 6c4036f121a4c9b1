package slack

// Names the external tests use; the package exports only what cmd/leashd
// (and other packages) need.
const MaxSection = maxSection
const MaxBlocks = maxBlocks
const MaxButton = maxButton
const MaxMessage = maxMessage
const EventsPath = eventsPath
const InteractionsPath = interactionsPath
const CommandsPath = commandsPath

var Mrkdwn = toMrkdwn
