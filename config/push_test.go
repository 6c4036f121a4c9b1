package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/config"
)

func TestPushSettings(t *testing.T) {
	p := config.Push{ExtraHosts: "Push.Example.org, *.corp.example; 10.0.0.7"}
	assert.NoError(t, p.Validate())
	assert.Equal(t, []string{"push.example.org", "*.corp.example", "10.0.0.7"}, p.Hosts())
	for _, bad := range []string{"https://push.example.org", "push.example.org:443", "push.example.org/x", "*", "*.", "a@b"} {
		err := config.Push{ExtraHosts: bad}.Validate()
		if assert.Error(t, err, bad) {
			assert.Contains(t, err.Error(), "LEASHD_PUSH_EXTRA_HOSTS")
		}
	}
	assert.NoError(t, config.Push{Subscriber: "mailto:ops@example.org"}.Validate())
	assert.NoError(t, config.Push{Subscriber: "https://example.org/contact"}.Validate())
	assert.ErrorContains(t, config.Push{Subscriber: "http://example.org"}.Validate(), "LEASHD_PUSH_SUBSCRIBER")
}
