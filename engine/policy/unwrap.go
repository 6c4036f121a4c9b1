package policy

import (
	"path"
	"regexp"
	"strings"
)

// shellOperators are the characters that let one command line run more
// than one command: separators and lists (; & | line breaks), substitutions
// ($ and backquotes) and redirections (< >).
const shellOperators = ";&|`$<>\n\r"

// HasShellOperators reports whether a command line could do more than run
// its first command with arguments.
func HasShellOperators(cmd string) bool { return strings.ContainsAny(cmd, shellOperators) }

// Commands splits a command line into the commands in it, each as its
// words joined by single spaces (see Split).
func Commands(cmd string) []string {
	cmds, _ := Split(cmd)
	return cmds
}

// Split splits a command line into the commands in it: at ; & | line
// breaks, backquotes, $( and parentheses and braces. Each is split into
// words as the shell does (quotes and backslashes taken off, nothing
// expanded), and unwrapped: leading VAR=value words, shell keywords
// (! if then else elif do while until) and wrappers with their options
// (Wrappers) are taken off, the command word loses its directory (/bin/rm
// is rm), and git loses its global options (git -C dir push is git push).
//
// It is a best effort for deny rules, not a shell parser: quotes do not
// protect the operators, so a quoted "a; b" is split too (which only makes
// deny rules match more). sure is false when a part could not be fully
// understood (a quote left open, an option a wrapper or git does not
// have, a wrapper's argument missing): an allow rule then does not match.
func Split(cmd string) (cmds []string, sure bool) {
	sure = true
	parts := strings.FieldsFunc(cmd, func(r rune) bool {
		return strings.ContainsRune(";&|`\n\r(){}", r)
	})
	for _, p := range parts {
		ws, ok := words(strings.TrimSuffix(strings.Trim(p, " \t"), "$"))
		sure = sure && ok
		ws, ok = unwrap(ws)
		sure = sure && ok
		if c := strings.Join(ws, " "); strings.TrimSpace(c) != "" {
			cmds = append(cmds, c)
		}
	}
	return cmds, sure
}

// words splits one simple command into words as the shell does: at blanks
// outside quotes, with quotes and backslashes taken off. ok is false when
// a quote is not closed (the rest is taken as one word).
func words(s string) (out []string, ok bool) {
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			out = append(out, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t':
			end()
			continue
		case '\\':
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				w.WriteString(s[i+1:])
				inWord = true
				end()
				return out, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if !closed {
				inWord = true
				end()
				return out, false
			}
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	end()
	return out, true
}

var assignment = regexp.MustCompile(`\A[A-Za-z_][A-Za-z0-9_]*=`)

// keywords are the shell's words that run the command after them.
var keywords = map[string]bool{"!": true, "if": true, "then": true, "else": true, "elif": true, "do": true, "while": true, "until": true}

// unwrap takes off a command's leading assignments, keywords and wrappers
// (with their options), and the directory of its command word; git's
// global options too.
func unwrap(ws []string) ([]string, bool) {
	sure := true
	for len(ws) > 0 {
		if assignment.MatchString(ws[0]) || keywords[ws[0]] {
			ws = ws[1:]
			continue
		}
		spec, ok := Wrappers[commandName(ws[0])]
		if !ok {
			break
		}
		rest, ok := spec.skip(ws[1:])
		sure = sure && ok
		if len(rest) == 0 {
			break // the wrapper alone (sudo -v): it is the command
		}
		ws = rest
	}
	if len(ws) == 0 {
		return nil, sure
	}
	ws = append([]string{commandName(ws[0])}, ws[1:]...)
	if ws[0] == "git" {
		rest, ok := gitOptions.skip(ws[1:])
		sure = sure && ok
		ws = append([]string{"git"}, rest...)
	}
	return ws, sure
}

// commandName is a command word without its directory: /usr/bin/git is git.
func commandName(w string) string {
	if !strings.Contains(w, "/") || strings.Trim(w, "/") == "" {
		return w
	}
	return path.Base(w)
}
