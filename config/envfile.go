package config

import (
	"fmt"
	"io"

	"github.com/kelseyhightower/envconfig"
)

// WriteEnvExample writes an environment file listing every LEASHD_ variable,
// commented out with its default and preceded by its description: the
// format of systemd's EnvironmentFile=, docker --env-file and compose's
// env_file: Config's variables, then each section's.
// deploy/leashd.env.example is generated with it.
func WriteEnvExample(w io.Writer, sections ...Section) error {
	if _, err := io.WriteString(w, envExampleHeader); err != nil {
		return fmt.Errorf("writing environment example: %w", err)
	}
	if err := eachSection(sections, func(prefix string, spec any) error {
		return envconfig.Usagef(prefix, spec, w, envExampleFormat)
	}); err != nil {
		return fmt.Errorf("writing environment example: %w", err)
	}
	return nil
}

const envExampleHeader = `# leashd configuration: one LEASHD_ variable per line, VAR=value, no quotes.
# Read by systemd (EnvironmentFile=/etc/leashd/leashd.env), docker --env-file
# and compose (env_file). Uncomment and set what you need; a commented line
# shows the default. Secrets (tokens) belong only in this file (mode 0600).
#
# The Claude Code CLI (LEASHD_AGENT=claude, the claude image) inherits this
# environment; give it its API key here:
#ANTHROPIC_API_KEY=
#
# Generated from leashd's settings: go test ./cmd/leashd -run TestEnvExample -update
`

var envExampleFormat = `{{range .}}
# {{usage_description .}}
#{{usage_key .}}={{usage_default .}}
{{end}}`
