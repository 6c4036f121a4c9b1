package sandbox

import (
	"os"
	"strings"
)

// envNames are the variables every agent gets from leashd's environment:
// what a shell, node and git need to work, and nothing that is leashd's.
var envNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
	"COLORTERM", "NO_COLOR", "IS_SANDBOX",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
}

// envPrefixes are the families agents' own tooling reads: the model
// providers' keys and settings, Node's options, certificate bundles.
var envPrefixes = []string{
	"LC_", "ANTHROPIC_", "CLAUDE_", "GEMINI_", "GOOGLE_", "OPENAI_", "CODEX_", "NODE_", "SSL_CERT_",
}

// Environ is the environment an agent starts with: from environ (as
// os.Environ gives it) the variables above and those the operator listed
// in LEASHD_AGENT_ENV (extra: "NAME", "PREFIX_*" or "NAME=value"), then
// set ("K=V", the driver's own, which win). A LEASHD_* variable is never
// passed, whatever the lists say: it is leashd's.
func Environ(environ, extra, set []string) []string {
	keep := map[string]bool{}
	prefixes := append([]string(nil), envPrefixes...)
	for _, n := range envNames {
		keep[n] = true
	}
	var values []string
	for _, e := range extra {
		switch {
		case strings.Contains(e, "="):
			values = append(values, e)
		case strings.HasSuffix(e, "*"):
			prefixes = append(prefixes, strings.TrimSuffix(e, "*"))
		default:
			keep[e] = true
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if leashd(name) {
			continue
		}
		if keep[name] || hasPrefix(name, prefixes) {
			out = append(out, kv)
		}
	}
	for _, kv := range append(values, set...) {
		if name, _, _ := strings.Cut(kv, "="); !leashd(name) {
			out = append(out, kv)
		}
	}
	return out
}

// hostEnviron is Environ of this process's environment.
func hostEnviron(extra, set []string) []string { return Environ(os.Environ(), extra, set) }

func leashd(name string) bool { return strings.HasPrefix(strings.ToUpper(name), "LEASHD_") }

func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
