package policy

import (
	"bytes"
	"fmt"
	"regexp"

	"gopkg.in/yaml.v3"
)

// maxLineSearch bounds the lines yamlError re-reads to find where a
// syntax error is; a policy is a few dozen lines.
const maxLineSearch = 2000

// yamlLine is yaml's "line N: " in its messages.
var yamlLine = regexp.MustCompile(`^yaml: (line \d+: )?`)

// yamlError says where a policy's YAML is broken. yaml.v3 often names the
// line where the enclosing list began, not the broken one (a bad indent
// on line 7 of a rule list is reported as "line 1"), and some errors name
// no line at all. The broken line is the first at which the file's
// beginning fails to parse with the same complaint; the message is
// source:line: not valid YAML: the complaint.
func yamlError(source string, data []byte, err error) error {
	why := yamlLine.ReplaceAllString(err.Error(), "")
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) <= maxLineSearch {
		for n := 1; n <= len(lines); n++ {
			var doc yaml.Node
			perr := yaml.Unmarshal(bytes.Join(lines[:n], nil), &doc)
			if perr != nil && yamlLine.ReplaceAllString(perr.Error(), "") == why {
				return fmt.Errorf("%s:%d: not valid YAML: %s", source, n, why)
			}
		}
	}
	return fmt.Errorf("%s: not valid YAML: %w", source, err)
}
