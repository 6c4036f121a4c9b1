package telegram

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBucketPacesEvenlyAndAllowsTheBurst(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := bucket{rate: Rate{Every: time.Second, Burst: 3}}
	var at []time.Time
	for range 5 {
		a := b.avail(t0)
		b.take(a)
		at = append(at, a)
	}
	assert.Equal(t, []time.Time{t0, t0, t0, t0.Add(time.Second), t0.Add(2 * time.Second)}, at)
	assert.False(t, b.full(t0.Add(4*time.Second)), "the burst is not back yet")
	assert.True(t, b.full(t0.Add(5*time.Second)))

	// A slot taken later than asked (another limiter held it back) counts
	// from when it is really used.
	g := bucket{rate: Rate{Every: time.Second, Burst: 1}}
	g.take(t0.Add(5 * time.Second))
	assert.Equal(t, t0.Add(6*time.Second), g.avail(t0))

	free := bucket{}
	free.take(t0)
	assert.Equal(t, t0, free.avail(t0))
	assert.True(t, free.full(t0))
}

// In any one-second window the defaults stay under Telegram's limits: 30
// messages for the bot, 1 per chat.
func TestDefaultLimitsStayUnderTelegramsRates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := bucket{rate: DefaultLimits.Global}
	var sent []time.Time
	for range 200 {
		a := g.avail(t0)
		g.take(a)
		sent = append(sent, a)
	}
	for i := range sent {
		n := 0
		for j := i; j < len(sent) && sent[j].Sub(sent[i]) < time.Second; j++ {
			n++
		}
		assert.LessOrEqual(t, n, 30, "window starting at message %d", i)
	}
	assert.GreaterOrEqual(t, DefaultLimits.Private.Every, time.Second)
	assert.GreaterOrEqual(t, DefaultLimits.Group.Every, 3*time.Second, "20 a minute in a group")
}
