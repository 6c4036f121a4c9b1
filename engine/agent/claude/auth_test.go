package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Result lines as CLI 2.1.197 and 2.1.332 print them without credentials,
// and others that are not about credentials.
func TestResultAuthFailed(t *testing.T) {
	for in, want := range map[string]bool{
		// no API key, never logged in (2.1.197; 2.1.332 adds terminal_reason)
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"num_turns":1,"result":"Not logged in · Please run /login","session_id":"s"}`: true,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"terminal_reason":"api_error","result":"Not logged in · Please run /login"}`:  true,
		// the API refused the key
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key"}`: true,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: Overloaded"}`:                  false,
		`{"type":"result","subtype":"success","is_error":false,"result":"Run /login in the CLI? Please run /login, it said."}`:           false,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":{"code":401},"result":"odd shape"}`:                     false,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":"401","result":"odd shape"}`:                            false,
	} {
		l, err := parseLine([]byte(in))
		require.NoError(t, err, "an unexpected api_error_status does not lose the result: %s", in)
		assert.Equal(t, want, l.result().AuthFailed, in)
	}
}
