package config

import (
	"strconv"
	"strings"
	"unicode"
)

// Sandbox modes (LEASHD_SANDBOX).
const (
	SandboxAuto   = "auto"
	SandboxBwrap  = "bwrap"
	SandboxDocker = "docker"
	SandboxOff    = "off"
)

// checkSandbox checks LEASHD_SANDBOX, its settings and LEASHD_AGENT_ENV.
func (c Config) checkSandbox(p *problems) {
	p.oneOf("SANDBOX", c.Sandbox, SandboxAuto, SandboxBwrap, SandboxDocker, SandboxOff)
	p.oneOf("SANDBOX_NETWORK", c.SandboxNetwork, "on", "off", "host")
	if c.SandboxHome != "" && !strings.HasPrefix(c.SandboxHome, "/") {
		p.bad("SANDBOX_HOME", c.SandboxHome, "give an absolute path")
	}
	if c.SandboxCpus != "" {
		if n, err := strconv.ParseFloat(c.SandboxCpus, 64); err != nil || n <= 0 || n > 1024 {
			p.bad("SANDBOX_CPUS", c.SandboxCpus, "accepted: a number of CPUs above 0, e.g. 1 or 1.5, or empty for no limit")
		}
	}
	if c.SandboxMemory != "" {
		if _, err := ParseMemory(c.SandboxMemory); err != nil {
			p.bad("SANDBOX_MEMORY", c.SandboxMemory, "accepted: bytes with an optional k, m or g suffix, at least 6m, e.g. 512m or 2g, or empty for no limit")
		}
	}
	if c.Sandbox == SandboxDocker && strings.TrimSpace(c.SandboxImage) == "" {
		p.bad("SANDBOX_IMAGE", c.SandboxImage, "LEASHD_SANDBOX=docker needs the agent image's name (build it from deploy/agent.Dockerfile)")
	}
	for _, e := range c.AgentEnv {
		if why := agentEnvProblem(e); why != "" {
			p.bad("AGENT_ENV", e, why)
		}
	}
}

// agentEnvProblem says what is wrong with one LEASHD_AGENT_ENV entry.
func agentEnvProblem(e string) string {
	name, _, _ := strings.Cut(e, "=")
	name = strings.TrimSuffix(name, "*")
	switch {
	case name == "":
		return "no variable name; accepted: NAME, PREFIX_* or NAME=value"
	case strings.HasPrefix(strings.ToUpper(name), Prefix+"_"):
		return "LEASHD_* variables are leashd's own settings (its tokens among them) and are never passed to agents"
	case strings.IndexFunc(name, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0:
		return "not a variable name; accepted: NAME, PREFIX_* or NAME=value (letters, digits and _)"
	}
	return ""
}

// ParseMemory reads a memory size such as 512m or 2g (k, m, g: powers of
// 1024) into bytes; Docker refuses less than 6 MiB.
func ParseMemory(s string) (int64, error) {
	mult := int64(1)
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1<<10, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1<<20, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1<<30, strings.TrimSuffix(t, "g")
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult || n*mult < 6<<20 {
		return 0, strconv.ErrRange
	}
	return n * mult, nil
}
