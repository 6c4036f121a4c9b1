package policy

import "strings"

// Option arguments of a long option.
const (
	noArg       = iota // --login
	needsArg           // --user=x or --user x
	optionalArg        // --preserve-env or --preserve-env=list
)

// Wrapper says how a command that runs another command takes its options:
// the words before the command it runs.
type Wrapper struct {
	flags  string         // short options without an argument
	args   string         // short options with an argument (-u x, -ux)
	optArg string         // short options with an optional, attached argument (-i, -ifoo)
	long   map[string]int // long options: noArg, needsArg or optionalArg
	// abbrev: long options may be shortened to a unique prefix (getopt).
	abbrev bool
	// positional is the number of words after the options and before the
	// command (timeout's duration).
	positional int
	// digits: -N is an option (nice -5).
	digits bool
	// dash: a lone - right after the options is one (env -).
	dash bool
	// whole: each short option is a word of its own, its argument the
	// next word (git -C dir, not -Cdir or -pP).
	whole bool
	// split: this short option (and split-string) gives a command line
	// whose words come before the rest (env -S 'git push').
	split byte
}

// Wrappers are the commands that run the command after them, as unwrapped
// by Split, with the options each takes (GNU coreutils, sudo 1.9, doas,
// bash's exec and command, GNU time and xargs).
var Wrappers = map[string]*Wrapper{
	"sudo": {flags: "ABbEeHiKklNnPSsVv", args: "aCcDgpRrTtUu", optArg: "h", abbrev: true, long: map[string]int{
		"askpass": noArg, "auth-type": needsArg, "background": noArg, "bell": noArg, "close-from": needsArg,
		"login-class": needsArg, "chdir": needsArg, "preserve-env": optionalArg, "edit": noArg, "group": needsArg,
		"set-home": noArg, "help": noArg, "host": needsArg, "login": noArg, "remove-timestamp": noArg,
		"reset-timestamp": noArg, "list": noArg, "no-update": noArg, "non-interactive": noArg,
		"preserve-groups": noArg, "prompt": needsArg, "chroot": needsArg, "role": needsArg, "stdin": noArg,
		"shell": noArg, "type": needsArg, "command-timeout": needsArg, "other-user": needsArg, "user": needsArg,
		"version": noArg, "validate": noArg,
	}},
	"doas": {flags: "Lns", args: "Cu"},
	"env": {flags: "0iv", args: "CSu", dash: true, split: 'S', abbrev: true, long: map[string]int{
		"ignore-environment": noArg, "null": noArg, "unset": needsArg, "chdir": needsArg, "debug": noArg,
		"split-string": needsArg, "default-signal": optionalArg, "ignore-signal": optionalArg,
		"block-signal": optionalArg, "list-signal-handling": noArg, "help": noArg, "version": noArg,
	}},
	"command": {flags: "pvV"},
	"builtin": {},
	"exec":    {flags: "cl", args: "a"},
	"nice":    {args: "n", digits: true, abbrev: true, long: map[string]int{"adjustment": needsArg, "help": noArg, "version": noArg}},
	"nohup":   {abbrev: true, long: map[string]int{"help": noArg, "version": noArg}},
	"time": {flags: "apqv", args: "fo", abbrev: true, long: map[string]int{
		"format": needsArg, "output": needsArg, "append": noArg, "verbose": noArg, "portability": noArg, "quiet": noArg,
		"help": noArg, "version": noArg,
	}},
	"timeout": {flags: "v", args: "ks", positional: 1, abbrev: true, long: map[string]int{
		"kill-after": needsArg, "signal": needsArg, "preserve-status": noArg, "foreground": noArg, "verbose": noArg,
		"help": noArg, "version": noArg,
	}},
	"stdbuf": {args: "ioe", abbrev: true, long: map[string]int{"input": needsArg, "output": needsArg, "error": needsArg, "help": noArg, "version": noArg}},
	"xargs": {flags: "0oprtx", args: "aEILnsPd", optArg: "eil", abbrev: true, long: map[string]int{
		"null": noArg, "arg-file": needsArg, "delimiter": needsArg, "eof": optionalArg, "replace": optionalArg,
		"max-lines": optionalArg, "max-args": needsArg, "open-tty": noArg, "interactive": noArg,
		"no-run-if-empty": noArg, "max-chars": needsArg, "verbose": noArg, "show-limits": noArg, "exit": noArg,
		"max-procs": needsArg, "process-slot-var": needsArg, "help": noArg, "version": noArg,
	}},
}

// gitOptions are git's own options, before its subcommand (git -C dir -c
// k=v --no-pager push). They are not abbreviated.
var gitOptions = &Wrapper{flags: "pPvh", args: "Cc", whole: true, long: map[string]int{
	"paginate": noArg, "no-pager": noArg, "bare": noArg, "no-replace-objects": noArg, "literal-pathspecs": noArg,
	"glob-pathspecs": noArg, "noglob-pathspecs": noArg, "icase-pathspecs": noArg, "no-optional-locks": noArg,
	"no-advice": noArg, "no-lazy-fetch": noArg, "html-path": noArg, "man-path": noArg, "info-path": noArg,
	"version": noArg, "help": noArg, "exec-path": optionalArg, "git-dir": needsArg, "work-tree": needsArg,
	"namespace": needsArg, "config-env": needsArg, "super-prefix": needsArg, "list-cmds": needsArg,
	"attr-source": needsArg,
}}

// skip returns the words after w's options: the command it runs; false
// when an option is not one w has, or an argument is missing.
func (w *Wrapper) skip(ws []string) ([]string, bool) {
	sure := true
	var split []string
	i := 0
	for i < len(ws) {
		word := ws[i]
		switch {
		case word == "--":
			i++
		case len(word) < 2 || word[0] != '-':
		case strings.HasPrefix(word, "--") && !(w.digits && isDigits(word[2:])):
			n, arg, ok := w.longOption(word[2:], ws[i+1:])
			sure = sure && ok
			if arg != nil {
				split = arg
			}
			i += n
			continue
		default:
			n, arg, ok := w.shortOptions(word[1:], ws[i+1:])
			sure = sure && ok
			if arg != nil {
				split = arg
			}
			i += n
			continue
		}
		break
	}
	if w.dash && i < len(ws) && ws[i] == "-" {
		i++
	}
	for range w.positional {
		if i >= len(ws) {
			return nil, false
		}
		i++
	}
	if i > len(ws) {
		return nil, false
	}
	if split != nil {
		return append(split, ws[i:]...), sure
	}
	return ws[i:], sure
}

// longOption reads --name[=value] (name without the dashes), whose value
// may be the next word (next): the words it takes, the words of a split
// string it gives, and false when w has no such option.
func (w *Wrapper) longOption(name string, next []string) (int, []string, bool) {
	name, value, hasValue := strings.Cut(name, "=")
	kind, ok := w.long[name]
	if !ok && w.abbrev && name != "" {
		found := ""
		for full := range w.long {
			if strings.HasPrefix(full, name) {
				if found != "" {
					return 1, nil, false // ambiguous
				}
				found = full
			}
		}
		if found != "" {
			name, kind, ok = found, w.long[found], true
		}
	}
	if !ok {
		return 1, nil, false
	}
	n := 1
	if kind == needsArg && !hasValue {
		if len(next) == 0 {
			return 1, nil, false
		}
		value, n = next[0], 2
	}
	if name == "split-string" && w.split != 0 {
		ws, ok := words(value)
		return n, nonNil(ws), ok
	}
	return n, nil, true
}

// shortOptions reads a cluster of short options (-nu root, -uroot), the
// dash taken off: the words it takes, the words of a split string it
// gives, and false when one is not w's.
func (w *Wrapper) shortOptions(cluster string, next []string) (int, []string, bool) {
	if w.digits && isDigits(strings.TrimPrefix(cluster, "-")) {
		return 1, nil, true
	}
	sure := !w.whole || len(cluster) == 1
	for j := 0; j < len(cluster); j++ {
		c := cluster[j]
		switch {
		case strings.IndexByte(w.flags, c) >= 0:
		case strings.IndexByte(w.optArg, c) >= 0:
			return 1, nil, sure
		case strings.IndexByte(w.args, c) >= 0:
			value, n := cluster[j+1:], 1
			if value == "" {
				if len(next) == 0 {
					return 1, nil, false
				}
				value, n = next[0], 2
			}
			if c == w.split {
				ws, ok := words(value)
				return n, nonNil(ws), sure && ok
			}
			return n, nil, sure
		default:
			sure = false
		}
	}
	return 1, nil, sure
}

func nonNil(ws []string) []string {
	if ws == nil {
		return []string{}
	}
	return ws
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
