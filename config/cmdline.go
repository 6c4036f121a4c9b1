package config

import (
	"errors"
	"fmt"
	"strings"
)

// SplitCommandLine splits a command line into its words the way a POSIX
// shell does for a simple command — blanks separate words, 'single quotes'
// keep everything, "double quotes" keep everything but \" \\ \$ \` and a
// backslash outside quotes keeps the next character — without running a
// shell. Shell syntax that only a shell could carry out (unquoted | & ; < >
// ( ) $ `) is refused with an error naming it, as are unterminated quotes
// and an empty line.
func SplitCommandLine(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inW   bool // a word has started (an empty '' counts)
	)
	end := func() {
		if inW {
			words = append(words, cur.String())
			cur.Reset()
			inW = false
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			end()
		case r == '\'':
			inW = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated single quote at character %d", i+1)
			}
			cur.WriteString(string(rs[i+1 : j]))
			i = j
		case r == '"':
			inW = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
					j++
					if rs[j] != '\n' {
						cur.WriteRune(rs[j])
					}
					continue
				}
				if rs[j] == '$' || rs[j] == '`' {
					return nil, fmt.Errorf("%q inside double quotes at character %d needs a shell, and none is run; quote it with '' or \\", rs[j], j+1)
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unterminated double quote at character %d", i+1)
			}
			i = j
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("the line ends with a lone backslash")
			}
			i++
			if rs[i] != '\n' { // backslash-newline joins lines
				inW = true
				cur.WriteRune(rs[i])
			}
		case strings.ContainsRune("|&;<>()$`", r):
			return nil, fmt.Errorf("%q at character %d needs a shell, and none is run; give one command with its arguments (quote the character to pass it literally)", r, i+1)
		default:
			inW = true
			cur.WriteRune(r)
		}
	}
	end()
	if len(words) == 0 {
		return nil, errors.New("no command given")
	}
	return words, nil
}
