package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ReadOnlyDir returns an empty folder on a read-only file system (a tmpfs
// of 1 MB mounted read-only), unmounted when the test ends. Root ignores
// file modes, so a folder of mode 0555 does not refuse its writes; a
// read-only mount refuses everyone's, with EROFS, as a disk mounted
// read-only does. Processes the test starts see it too. It skips the
// test where mounting is not allowed (not root).
func ReadOnlyDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "readonly")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m")
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("mounting a read-only tmpfs is not allowed here (needs root): %v", err)
	}
	if err != nil {
		t.Fatalf("mount a read-only tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
