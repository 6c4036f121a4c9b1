package config_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/config"
)

// FuzzLoadNumbers feeds arbitrary text to a *_SECONDS variable and to a
// plain number. Load either reads exactly the decimal value or says, in one
// line per variable, which variable, which value and what is accepted;
// Validate then accepts exactly the values in range, and a valid number of
// seconds comes out of its accessor unchanged (no wrap-around).
func FuzzLoadNumbers(f *testing.F) {
	for _, s := range [][2]string{
		{"300", "4"}, {"abc", "x"}, {"", ""}, {"010", "08"}, {"0x10", "1_0"}, {"18446744074", "1001"},
		{"9999999999", "0"}, {"99999999999999999999", "-1"}, {"5m", "1.5"}, {" 30", "+4"}, {"604800", "1000"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, secs, agents string) {
		if strings.ContainsRune(secs, 0) || strings.ContainsRune(agents, 0) {
			t.Skip("the environment cannot hold NUL")
		}
		cleanEnv(t)
		t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", secs)
		t.Setenv("LEASHD_MAX_CONCURRENT_AGENTS", agents)
		ns, errS := strconv.ParseInt(secs, 10, 64)
		na, errA := strconv.ParseInt(agents, 10, 64)
		c, err := config.Load()
		if errS != nil || errA != nil {
			if err == nil {
				t.Fatalf("%q, %q loaded without error", secs, agents)
			}
			lines := strings.Split(err.Error(), "\n")
			want := 0
			for _, v := range []struct {
				name, value string
				bad         error
			}{{"LEASHD_APPROVAL_TIMEOUT_SECONDS", secs, errS}, {"LEASHD_MAX_CONCURRENT_AGENTS", agents, errA}} {
				if v.bad == nil {
					continue
				}
				want++
				prefix := v.name + "=" + strconv.Quote(v.value) + " is invalid: "
				found := false
				for _, l := range lines {
					if strings.HasPrefix(l, prefix) && strings.Contains(l, "; accepted: a whole number") {
						found = true
					}
				}
				if !found {
					t.Fatalf("no line %q…accepted in\n%v", prefix, err)
				}
			}
			if len(lines) != want {
				t.Fatalf("%d problems, %d lines:\n%v", want, len(lines), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q, %q: %v", secs, agents, err)
		}
		if int64(c.ApprovalTimeoutSeconds) != ns || int64(c.MaxConcurrentAgents) != na {
			t.Fatalf("read %d, %d from %q, %q", c.ApprovalTimeoutSeconds, c.MaxConcurrentAgents, secs, agents)
		}
		err = c.Validate()
		inRange := ns >= 0 && ns <= 604800 && na >= 1 && na <= 1000
		if inRange != (err == nil) {
			t.Fatalf("%d s, %d agents: in range %v, Validate: %v", ns, na, inRange, err)
		}
		if inRange && c.ApprovalTimeout() != time.Duration(ns)*time.Second {
			t.Fatalf("%d s became %v", ns, c.ApprovalTimeout())
		}
		if ns > 0 && c.ApprovalTimeout() < time.Duration(min(ns, 604800))*time.Second {
			t.Fatalf("%d s wrapped around to %v", ns, c.ApprovalTimeout())
		}
	})
}
