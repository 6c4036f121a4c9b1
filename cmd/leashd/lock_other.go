//go:build !unix

package main

// lockInstance does nothing where flock is not available.
func lockInstance(string) (func(), error) { return func() {}, nil }
