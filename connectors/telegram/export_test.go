package telegram

// ParseUserIDs is parseUserIDs, for the external tests.
var ParseUserIDs = parseUserIDs
