package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

// TestPrefix starts the variables only leashd's tests read (the paths of
// real tools, LEASHD_TEST_CLAUDE and the like). They are never settings,
// so CheckVariables lets them be: a developer's shell may well export
// them while running leashd.
const TestPrefix = Prefix + "_TEST_"

// Variables lists the name of every variable leashd reads: Config's, then
// each section's. The names come from the structs themselves (the names
// envconfig reads), so a field added to Config or to a chat app's settings
// is known here without anyone listing it.
func Variables(sections ...Section) []string {
	var out []string
	_ = eachSection(sections, func(prefix string, spec any) error {
		var buf bytes.Buffer
		if err := envconfig.Usagef(prefix, spec, &buf, "{{range .}}{{.Key}}\n{{end}}"); err != nil {
			panic("config: listing variables: " + err.Error()) // spec is a struct: cannot happen
		}
		out = append(out, strings.Fields(buf.String())...)
		return nil
	})
	return out
}

// CheckVariables refuses every LEASHD_ variable of environ (KEY=value
// entries, as os.Environ gives them) that leashd does not read: a
// misspelt one (LEASHD_WEBADDR) would otherwise be ignored, and leashd
// would run with the default the operator meant to change. Each is named
// with the closest known variable when one is close. LEASHD_TEST_*
// variables are let be (see TestPrefix).
func CheckVariables(environ []string, sections ...Section) error {
	known := Variables(sections...)
	var errs []error
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if !strings.HasPrefix(upper, Prefix+"_") || strings.HasPrefix(upper, TestPrefix) || slices.Contains(known, name) {
			continue
		}
		msg := fmt.Sprintf("%s is not a leashd variable, and leashd does not start with it set", name)
		if guess := closest(upper, known); guess != "" {
			msg += fmt.Sprintf(": did you mean %s? Rename it", guess)
		} else {
			msg += ": remove it or correct its name"
		}
		errs = append(errs, errors.New(msg+" (leashd -h lists every variable)"))
	}
	return errors.Join(errs...)
}

// closest returns the known name nearest to name, when it is near enough
// to be a slip (a letter or an underscore missing, added, swapped or
// wrong; a third of the name at most), else "".
func closest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(strings.TrimPrefix(name, Prefix+"_"), strings.TrimPrefix(k, Prefix+"_"))
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist > max(2, (len(name)-len(Prefix)-1)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (insertions,
// deletions and substitutions of bytes; the names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
