package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

// chatSettings stands for a chat app's settings.
type chatSettings struct {
	BotToken     string   `split_words:"true" desc:"The bot's token"`
	ApiURL       string   `split_words:"true" default:"https://chat.example" desc:"The API's base URL"` //nolint:revive // envconfig's API_URL
	AllowedUsers []string `split_words:"true" desc:"Who may use it"`
	MaxStreams   int      `split_words:"true" default:"10" min:"1" max:"100" desc:"Streams at once"`
}

func chatSection() (config.Section, *chatSettings) {
	s := &chatSettings{}
	return config.Section{Name: "chat", Settings: s}, s
}

// A section reads LEASHD_<NAME>_<FIELD>, exactly as Config reads its own:
// defaults, trimmed lists, decimal numbers and the usual messages.
func TestSectionLoad(t *testing.T) {
	cleanEnv(t)
	sec, s := chatSection()
	assert.Equal(t, "LEASHD_CHAT", sec.Prefix())
	assert.Equal(t, []string{"LEASHD_CHAT_BOT_TOKEN", "LEASHD_CHAT_API_URL", "LEASHD_CHAT_ALLOWED_USERS", "LEASHD_CHAT_MAX_STREAMS"}, sec.Variables())
	t.Setenv("LEASHD_CHAT_BOT_TOKEN", "t0k")
	t.Setenv("LEASHD_CHAT_ALLOWED_USERS", " a , ,b ")
	t.Setenv("LEASHD_CHAT_MAX_STREAMS", "010")
	t.Setenv("BOT_TOKEN", "not mine")
	t.Setenv("CHAT_API_URL", "not mine")
	require.NoError(t, sec.Load())
	assert.Equal(t, chatSettings{BotToken: "t0k", ApiURL: "https://chat.example", AllowedUsers: []string{"a", "b"}, MaxStreams: 10}, *s)
	require.NoError(t, sec.CheckRanges())

	t.Setenv("LEASHD_CHAT_MAX_STREAMS", "many")
	err := sec.Load()
	require.Error(t, err)
	assert.Equal(t, `LEASHD_CHAT_MAX_STREAMS="many" is invalid: not a whole number; accepted: a whole number from 1 to 100`, err.Error())
}

func TestSectionDefaultsAndRanges(t *testing.T) {
	t.Setenv("LEASHD_CHAT_BOT_TOKEN", "from the environment")
	sec, s := chatSection()
	sec.Defaults()
	assert.Equal(t, chatSettings{ApiURL: "https://chat.example", MaxStreams: 10}, *s, "Defaults reads no variable")
	s.MaxStreams = 0
	err := sec.CheckRanges()
	require.Error(t, err)
	assert.Equal(t, `LEASHD_CHAT_MAX_STREAMS="0" is invalid: accepted: a whole number from 1 to 100`, err.Error())
}

// Usage and the environment example list Config's variables, then each
// section's.
func TestUsageListsSections(t *testing.T) {
	sec, _ := chatSection()
	var usage, example strings.Builder
	require.NoError(t, config.Usage(&usage, sec))
	require.NoError(t, config.WriteEnvExample(&example, sec))
	for _, out := range []string{usage.String(), example.String()} {
		assert.Less(t, strings.Index(out, "LEASHD_AGENT"), strings.Index(out, "LEASHD_CHAT_BOT_TOKEN"))
		for _, name := range sec.Variables() {
			assert.Contains(t, out, name)
		}
	}
	assert.Contains(t, lineWith(usage.String(), "LEASHD_CHAT_MAX_STREAMS"), "Streams at once")
	assert.Contains(t, lineWith(usage.String(), "LEASHD_CHAT_API_URL"), "https://chat.example")
	assert.Contains(t, example.String(), "#LEASHD_CHAT_API_URL=https://chat.example")
	assert.Equal(t, 1, strings.Count(usage.String(), "VARIABLE"), "one header")
}
