package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/policy"
)

// BenchmarkEvaluate: a 100-rule policy deciding a compound Bash command
// that only the last rule matches (every rule is tried, each on every
// command in the line), and a Write path.
func BenchmarkEvaluate(b *testing.B) {
	var src strings.Builder
	src.WriteString("rules:\n")
	for i := range 99 {
		fmt.Fprintf(&src, "  - tool: Bash\n    command: '^tool%d (build|test)\\b'\n    decision: deny\n    reason: r%d\n", i, i)
	}
	src.WriteString("  - tool: '*'\n    path: 'src/**/*.go'\n    decision: allow\n")
	p, err := policy.Parse("bench.yaml", []byte(src.String()))
	if err != nil {
		b.Fatal(err)
	}
	bash := policy.Request{Tool: "Bash", Command: "cd sub && FOO=1 make -j4 build | tee log.txt; git status", Chat: "web:x"}
	write := policy.Request{Tool: "Write", Paths: []string{"/repo/src/a/b/c.go"}, WorkDir: "/repo"}
	b.Run("bash", func(b *testing.B) {
		for b.Loop() {
			if p.Evaluate(bash).Rule != nil {
				b.Fatal("matched")
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if p.Evaluate(write).Decision != policy.Allow {
				b.Fatal("not allowed")
			}
		}
	})
}
