package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"text/tabwriter"

	"github.com/kelseyhightower/envconfig"
)

// Section is the part of the configuration a chat app owns: Settings
// points to a struct tagged like Config (split_words, default, desc, min,
// max), whose variables are LEASHD_<NAME>_<FIELD> — e.g. the field BotToken
// of the section "telegram" is LEASHD_TELEGRAM_BOT_TOKEN. It is read, listed
// and range-checked here exactly as Config is; what its values mean the
// chat app checks itself.
type Section struct {
	Name     string // "telegram": its variables start with LEASHD_TELEGRAM_
	Settings any    // a pointer to the app's settings struct
}

// Prefix is the section's variable prefix without the trailing "_", e.g.
// "LEASHD_TELEGRAM".
func (s Section) Prefix() string { return Prefix + "_" + strings.ToUpper(s.Name) }

// Load fills the settings from the environment (only the section's own
// LEASHD_ variables), reporting every bad value at once.
func (s Section) Load() error { return process(s.Prefix(), os.LookupEnv, s.Settings) }

// Defaults fills the settings with their defaults, without reading the
// environment.
func (s Section) Defaults() {
	// Processing an empty lookup only applies defaults; it cannot fail
	// for valid tags.
	_ = process(s.Prefix()+"_DEFAULTS_NEVER_SET_"+fmt.Sprint(os.Getpid()), func(string) (string, bool) { return "", false }, s.Settings)
}

// CheckRanges checks every number of the section against its min and max
// tags, as Config.Validate does for Config's.
func (s Section) CheckRanges() error {
	return errors.Join(checkRanges(s.Prefix(), reflect.ValueOf(s.Settings).Elem())...)
}

// Variables lists the section's variable names, in the order of its fields.
func (s Section) Variables() []string {
	var out []string
	for _, f := range fieldsOf(s.Prefix(), reflect.TypeOf(s.Settings).Elem()) {
		out = append(out, f.key)
	}
	return out
}

// Usage writes every variable with its type, default and description:
// Config's, then each section's.
func Usage(w io.Writer, sections ...Section) error {
	tw := tabwriter.NewWriter(w, 1, 4, 2, ' ', 0)
	if _, err := io.WriteString(tw, "VARIABLE\tDEFAULT\tMEANING\n"); err != nil {
		return fmt.Errorf("printing usage: %w", err)
	}
	if err := eachSection(sections, func(prefix string, spec any) error {
		return envconfig.Usagef(prefix, spec, tw, usageFormat)
	}); err != nil {
		return fmt.Errorf("printing usage: %w", err)
	}
	return tw.Flush()
}

const usageFormat = `{{range .}}{{usage_key .}}	{{usage_default .}}	{{usage_description .}}
{{end}}`

// eachSection calls f with Config's prefix and a zero Config, then with
// each section's.
func eachSection(sections []Section, f func(prefix string, spec any) error) error {
	if err := f(Prefix, &Config{}); err != nil {
		return err
	}
	for _, s := range sections {
		zero := reflect.New(reflect.TypeOf(s.Settings).Elem()).Interface()
		if err := f(s.Prefix(), zero); err != nil {
			return err
		}
	}
	return nil
}
