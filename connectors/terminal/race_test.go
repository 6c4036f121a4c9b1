//go:build race

package terminal_test

func init() { raceEnabled = true }
