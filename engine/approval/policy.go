package approval

import (
	"strings"
)

// PolicyBy is the "by" of a decision an approval policy made, in the
// audit log.
const PolicyBy = "policy"

// PolicyDeniedPrefix starts what the agent reads when a policy rule denies
// a call: "Denied by leashd policy rule 2 (line 7): <reason>".
const PolicyDeniedPrefix = "Denied by leashd policy "

// OneLine is the first line of s, at most n characters, marked when cut.
func OneLine(s string, n int) string {
	first, _, more := strings.Cut(s, "\n")
	r := []rune(first)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	if more {
		return first + " …"
	}
	return first
}
