package telegram

import (
	"crypto/subtle"
	"encoding/json"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// secretEqual compares secrets in constant time; an empty expected secret
// never matches.
func secretEqual(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
