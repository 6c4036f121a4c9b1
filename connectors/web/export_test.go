package web

// Names the external tests use; the package exports only what cmd/leashd
// (and other packages) need.
const MaxAskTimeout = maxAskTimeout
const MaxAskWait = maxAskWait

var ParseAsk = parseAsk

type AskRequest = askRequest
type AskResponse = askResponse
type Asker = programAsker

var OutcomeOf = outcomeOf
