//go:build !linux

package testkit

import "testing"

// SmallFolder skips the test: small file systems are mounted on Linux
// only.
func SmallFolder(t testing.TB, size int) string {
	t.Helper()
	t.Skip("a small folder is made by a Linux mount")
	return ""
}
