package deploy

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/leashd/leashd/connectors/web"
)

// The open-file limit the systemd unit and the container examples set
// leaves the web server room for the connections LEASHD_WEB_MAX_CONNECTIONS
// allows by default (leashd keeps a quarter of the limit, at least 64,
// for agents, the store and outgoing connections); they all set the same
// figure, and the README states it and the connections it allows.
func TestOpenFileLimitFitsTheWebConnections(t *testing.T) {
	sf, ok := reflect.TypeFor[web.Config]().FieldByName("MaxConnections")
	require.True(t, ok)
	m := regexp.MustCompile(`at most (\d+)`).FindStringSubmatch(sf.Tag.Get("desc"))
	require.NotNil(t, m, "LEASHD_WEB_MAX_CONNECTIONS's description states its default cap: %s", sf.Tag.Get("desc"))
	conns, _ := strconv.Atoi(m[1])
	room := func(limit int) int { return limit - max(limit/4, 64) }

	figures := map[string]int{}
	unit := read(t, "leashd.service")
	if m := regexp.MustCompile(`(?m)^LimitNOFILE=(\d+)$`).FindStringSubmatch(unit); assert.NotNil(t, m, "leashd.service sets LimitNOFILE") {
		figures["leashd.service LimitNOFILE"], _ = strconv.Atoi(m[1])
	}
	var compose struct {
		Services map[string]struct {
			Ulimits struct {
				Nofile struct{ Soft, Hard int }
			}
		}
	}
	require.NoError(t, yaml.Unmarshal([]byte(read(t, "compose.yaml")), &compose))
	nofile := compose.Services["leashd"].Ulimits.Nofile
	figures["compose.yaml ulimits.nofile.soft"] = nofile.Soft
	figures["compose.yaml ulimits.nofile.hard"] = nofile.Hard
	if m := regexp.MustCompile(`--ulimit nofile=(\d+):(\d+)`).FindStringSubmatch(read(t, "README.md")); assert.NotNil(t, m, "deploy/README.md's docker run sets --ulimit nofile") {
		figures["deploy/README.md docker run soft"], _ = strconv.Atoi(m[1])
		figures["deploy/README.md docker run hard"], _ = strconv.Atoi(m[2])
	}
	limit := figures["leashd.service LimitNOFILE"]
	for where, n := range figures {
		assert.Equal(t, limit, n, "%s: the same open-file limit everywhere", where)
		assert.GreaterOrEqual(t, room(n), conns, "%s=%d leaves the web server less than its default %d connections", where, n, conns)
	}
	readme := read(t, "../README.md")
	assert.Contains(t, readme, "at most "+strconv.Itoa(conns)+")", "the README states the default cap")
	assert.Contains(t, readme, "set an open-file limit of "+strconv.Itoa(limit), "the README states the figure")
	assert.Contains(t, readme, "room for up to "+strconv.Itoa(room(limit))+" connections", "the README states what the figure allows")
	assert.Contains(t, readme, "--ulimit nofile="+strconv.Itoa(limit)+":"+strconv.Itoa(limit))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
