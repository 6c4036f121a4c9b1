package config_test

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

func TestWriteEnvExampleListsEveryVariable(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, config.WriteEnvExample(&buf))
	names := envNames(t)

	seen := map[string]string{}
	var lastComment string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#LEASHD_"):
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "#"), "=")
			require.True(t, ok, line)
			f, known := names[k]
			require.True(t, known, "%s is not a Config variable", k)
			assert.Equal(t, f.Tag.Get("default"), v, k)
			assert.Equal(t, "# "+f.Tag.Get("desc"), lastComment, "description above %s", k)
			seen[k] = v
		case strings.HasPrefix(line, "#"):
			lastComment = line
		case line != "":
			t.Fatalf("uncommented line %q: the example must not set anything", line)
		}
	}
	assert.Len(t, seen, len(names))
	assert.Equal(t, reflect.TypeFor[config.Config]().NumField(), len(seen))
}
