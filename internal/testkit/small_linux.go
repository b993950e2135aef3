package testkit

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// SmallFolder returns a new folder on a file system of size bytes (a
// tmpfs), unmounted when the test ends: a disk that fills up. Mounting
// needs root; without it the test is skipped, saying so.
func SmallFolder(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d", size)); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("a small folder needs a mount, which needs root: %v", err)
		}
		t.Fatalf("mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
