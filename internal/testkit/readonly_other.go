//go:build !linux

package testkit

import "testing"

// ReadOnlyDir skips the test: read-only mounts are made on Linux only.
func ReadOnlyDir(t testing.TB) string {
	t.Skip("a read-only mount is made on Linux only")
	return ""
}
