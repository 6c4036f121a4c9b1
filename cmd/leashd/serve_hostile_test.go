package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// floodCLI is a stand-in for a Claude Code CLI gone hostile: it answers the
// initialize handshake, and to every prompt prints one assistant message of
// $FLOOD_BYTES letters on a single line, then a result.
const floodCLI = `#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"subtype":"initialize"'*)
      id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p')
      printf '{"type":"control_response","response":{"subtype":"success","request_id":"%s","response":{}}}\n' "$id" ;;
    *'"type":"user"'*)
      printf '{"type":"system","subtype":"init","session_id":"flood-1"}\n'
      printf '{"type":"assistant","parent_tool_use_id":null,"message":{"role":"assistant","content":[{"type":"text","text":"'
      head -c "$FLOOD_BYTES" /dev/zero | tr '\0' A
      printf '"}]},"session_id":"flood-1"}\n'
      printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"flood-1","num_turns":1,"total_cost_usd":0.01}\n' ;;
  esac
done
`

func writeFloodCLI(t testing.TB, dir string) string {
	t.Helper()
	cli := filepath.Join(dir, "claude")
	require.NoError(t, os.WriteFile(cli, []byte(floodCLI), 0o755))
	return cli
}

var truncatedNote = regexp.MustCompile(`… truncated \((\d+) bytes\)`)

// TestServeHugeAgentLineReachesTelegramCapped: the agent prints a 50 MB
// line. The Telegram chat gets a few messages — the first
// LEASHD_MAX_TURN_OUTPUT_BYTES of the text, then a "… truncated (N bytes)"
// note — instead of ~12,800, and leashd answers the next prompt.
func TestServeHugeAgentLineReachesTelegramCapped(t *testing.T) {
	fake := tgfake.New()
	defer fake.Close()
	dir := testenv.PrivateDir(t)
	const me = int64(1001)
	const limit = 8192
	_, _, stop := startServe(t, dir,
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH="+writeFloodCLI(t, dir),
		"FLOOD_BYTES="+strconv.Itoa(50<<20), "LEASHD_AGENT_ENV=FLOOD_BYTES",
		"LEASHD_MAX_TURN_OUTPUT_BYTES="+strconv.Itoa(limit),
		"LEASHD_TELEGRAM_BOT_TOKEN="+fake.Token(),
		"LEASHD_TELEGRAM_API_URL="+fake.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001")
	defer func() { assert.NoError(t, stop()) }()

	fake.Text(me, me, "write a lot")
	all := func() string {
		var b strings.Builder
		for _, m := range fake.BotMessages(me) {
			b.WriteString(m.Text + "\n")
		}
		return b.String()
	}
	require.True(t, fake.Wait(60*time.Second, func() bool { return strings.Contains(all(), "Done") }),
		"the turn ends with its summary; messages: %.500s", all())
	msgs := fake.BotMessages(me)
	out := all()
	assert.LessOrEqual(t, len(msgs), 5, "a few messages, not thousands")
	assert.Equal(t, limit, strings.Count(out, "A"), "exactly the turn's allowance of the text")
	m := truncatedNote.FindStringSubmatch(out)
	require.NotNil(t, m, "a visible note says what was left out: %.300s", out[max(0, len(out)-300):])
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 4_000_000, "the note counts what was left out of the (already capped) message")
	assert.Equal(t, 1, len(truncatedNote.FindAllString(out, -1)), "one note")
}
