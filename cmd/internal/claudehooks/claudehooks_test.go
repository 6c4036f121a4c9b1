package claudehooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ours(cmd string) bool { return strings.HasPrefix(cmd, "/bin/leashd hook ") }

var hooks = []Hook{
	{Event: "PermissionRequest", Matcher: "*", Command: "/bin/leashd hook permission-request --chat desk", Timeout: 360},
	{Event: "Stop", Command: "/bin/leashd hook stop --chat desk", Timeout: 360},
}

const theirs = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  },\n  \"n\": 1.50\n}\n"

// TestInstallMergesAndUninstallGivesTheFileBack: the person's settings and
// hooks stay, a second install changes nothing, the file before install is
// kept beside it, and uninstall leaves it byte for byte as it was.
func TestInstallMergesAndUninstallGivesTheFileBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(theirs), 0o640))
	changed, err := Install(path, hooks, ours)
	require.NoError(t, err)
	assert.True(t, changed)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"say done"`, "their hook stays")
	assert.Contains(t, s, `"model": "opus"`)
	assert.Contains(t, s, `1.50`, "numbers stay as written")
	assert.Contains(t, s, `"timeout": 360`)
	bak, err := os.ReadFile(path + BackupSuffix)
	require.NoError(t, err)
	assert.Equal(t, theirs, string(bak))
	fi, _ := os.Stat(path)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the file keeps its mode")

	changed, err = Install(path, hooks, ours)
	require.NoError(t, err)
	assert.False(t, changed, "installing twice changes nothing")
	found, err := Find(path, ours)
	require.NoError(t, err)
	assert.Len(t, found, 2)

	n, err := Uninstall(path, ours)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	b, _ = os.ReadFile(path)
	assert.Equal(t, theirs, string(b), "byte for byte as before install")
	assert.NoFileExists(t, path+BackupSuffix)
}

// TestUninstallKeepsWhatChangedMeanwhile: a setting added after install
// stays; only leashd's hooks go.
func TestUninstallKeepsWhatChangedMeanwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(path, []byte(theirs), 0o600))
	_, err := Install(path, hooks, ours)
	require.NoError(t, err)
	b, _ := os.ReadFile(path)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), `"model": "opus"`, `"model": "sonnet"`, 1)), 0o600))
	n, err := Uninstall(path, ours)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	b, _ = os.ReadFile(path)
	assert.Contains(t, string(b), "sonnet")
	assert.Contains(t, string(b), "say done")
	assert.NotContains(t, string(b), "leashd")
}

// TestNoFileBeforeNoFileAfter: a settings file install created is gone
// after uninstall; a file that is not JSON is refused, named, untouched.
func TestNoFileBeforeNoFileAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	_, err := Install(path, hooks, ours)
	require.NoError(t, err)
	assert.FileExists(t, path)
	_, err = Uninstall(path, ours)
	require.NoError(t, err)
	assert.NoFileExists(t, path)

	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	_, err = Install(path, hooks, ours)
	require.ErrorContains(t, err, path+" is not a JSON object")
	b, _ := os.ReadFile(path)
	assert.Equal(t, "{not json", string(b))
}

// FuzzInstallUninstall: whatever JSON object the file holds, install then
// uninstall gives it back byte for byte.
func FuzzInstallUninstall(f *testing.F) {
	f.Add(theirs)
	f.Add(`{"hooks":{"PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`)
	f.Add(`{"hooks":{"Stop":"odd"}}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(t.TempDir(), "settings.json")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		if _, err := Install(path, hooks, ours); err != nil {
			b, _ := os.ReadFile(path)
			assert.Equal(t, content, string(b), "refused, the file is untouched")
			return
		}
		_, err := Uninstall(path, ours)
		require.NoError(t, err)
		b, _ := os.ReadFile(path)
		assert.Equal(t, content, string(b))
	})
}
