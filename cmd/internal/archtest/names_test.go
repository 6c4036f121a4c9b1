package archtest

import (
	"go/scanner"
	"go/token"
	"os"
	"path"
	"strings"
	"testing"
)

// namesClaudeChecked reports whether the file is one that may not name
// Claude: under engine/ (but for the Claude driver), interactions/ or
// connectors/, test files and test rigs (engine/enginetest/..., which fake
// the model APIs the agents call) aside.
//
// Agent drivers may name the agents they speak to (the ACP driver reads
// the Claude adapter's _meta); the contract in engine/agent may not.
func namesClaudeChecked(f goFile) bool {
	if f.isTest() || agentOf(pkgOfFile(f.Rel)) != "" || under(f.Rel, "engine/enginetest") {
		return false
	}
	return under(f.Rel, "engine") || under(f.Rel, "interactions") || under(f.Rel, "connectors")
}

// TestOnlyClaudeDriverNamesClaude checks that outside the Claude driver (and
// cmd) no identifier or string literal contains "claude", in any case, and
// nothing, comments included, says "Claude Code".
func TestOnlyClaudeDriverNamesClaude(t *testing.T) {
	for _, f := range goFiles(t) {
		if !namesClaudeChecked(f) {
			continue
		}
		src, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, hit := range claudeMentions(src) {
			t.Errorf("%s:%d: %s names Claude", f.Rel, hit.line, hit.text)
		}
	}
}

// mention is one token that names Claude.
type mention struct {
	line int
	text string
}

// claudeMentions returns the identifiers and literals of src that contain
// "claude" (any case), and the comments that say "Claude Code".
func claudeMentions(src []byte) []mention {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var hits []mention
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return hits
		}
		var hit bool
		switch tok {
		case token.COMMENT:
			hit = strings.Contains(lit, "Claude Code")
		case token.IDENT, token.STRING, token.CHAR:
			hit = strings.Contains(strings.ToLower(lit), "claude")
		}
		if hit {
			hits = append(hits, mention{line: fset.Position(pos).Line, text: shorten(lit)})
		}
	}
}

// shorten cuts a token to its first line and at most 60 bytes for a
// failure message.
func shorten(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// pkgOfFile is the package folder of a file path relative to the module.
func pkgOfFile(rel string) string { return path.Dir(rel) }
