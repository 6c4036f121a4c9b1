package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// A LEASHD_DB_PATH leashd cannot use is named in the message, whichever
// command meets it: under a file, a directory, or a file that is no
// database.
func TestUnusableDBPathNamesTheVariable(t *testing.T) {
	state := testenv.PrivateDir(t)
	file := filepath.Join(state, "afile")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	dir := filepath.Join(state, "dir.db")
	require.NoError(t, os.Mkdir(dir, 0o700))
	junk := filepath.Join(state, "junk.db")
	require.NoError(t, os.WriteFile(junk, []byte("not a database, not at all\n"), 0o600))
	cases := []struct {
		name, db string
		args     []string
		want     string
	}{
		{"serve, under a file", filepath.Join(file, "leashd.db"), nil,
			"LEASHD_DB_PATH=" + filepath.Join(file, "leashd.db") + ": its directory " + file + " cannot be made"},
		{"serve, a directory", dir, nil,
			"LEASHD_DB_PATH=" + dir + " is a directory: give the path of the database file, e.g. " + filepath.Join(dir, "leashd.db")},
		{"serve, not a database", junk, nil, `LEASHD_DB_PATH="` + junk + `": opening database`},
		{"audit, under a file", filepath.Join(file, "leashd.db"), []string{"audit"}, "LEASHD_DB_PATH=" + filepath.Join(file, "leashd.db") + ": database"},
		{"audit, a directory", dir, []string{"audit"}, "LEASHD_DB_PATH=" + dir + ": database " + dir + " is a directory"},
		{"audit, not a database", junk, []string{"audit"}, "LEASHD_DB_PATH=" + junk + ": reading database"},
		{"audit --db", dir, []string{"audit", "--db", junk}, "--db " + junk + ": reading database"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("LEASHD_AGENT", "demo")
			t.Setenv("LEASHD_DB_PATH", tc.db)
			_, _, err := runCmd(t, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
