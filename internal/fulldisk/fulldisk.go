//go:build linux

// Package fulldisk gives a test a small file system of its own that it
// can fill to the last byte and free again: a tmpfs mounted on a
// temporary folder, where every write past the filler fails with ENOSPC,
// as on a full disk. Mounting needs root (CI runs as root): as root a
// refused mount fails the test, so that it is never skipped there;
// otherwise the test is skipped. It is imported by tests only.
package fulldisk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Disk is a small tmpfs. Its methods are not safe for concurrent use.
type Disk struct {
	// Dir is where the file system is mounted.
	Dir    string
	t      testing.TB
	filler string
	fills  int
}

// Mount mounts a tmpfs of size bytes on a new temporary folder, unmounted
// when the test ends.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("mount a %d-byte tmpfs as root: %v", size, err)
		}
		t.Skipf("mounting a tmpfs needs root (CI runs as root): %v", err)
	}
	// Registered after TempDir's own cleanup, so it runs before it: the
	// folder is unmounted, then removed.
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, t: t}
}

// Path is the path of name on the disk.
func (d *Disk) Path(name string) string { return filepath.Join(d.Dir, name) }

// Fill writes a filler file until the disk has no byte left.
func (d *Disk) Fill() {
	d.t.Helper()
	d.fills++
	d.filler = d.Path(fmt.Sprintf(".filler-%d", d.fills))
	f, err := os.OpenFile(d.filler, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		d.t.Fatalf("fill %s: %v", d.Dir, err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for len(buf) > 0 {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				d.t.Fatalf("fill %s: %v", d.Dir, err)
			}
			buf = buf[:len(buf)/2] // the last pages, to the last byte
		}
	}
	if n := d.Available(); n != 0 {
		d.t.Fatalf("fill %s: %d bytes are still free", d.Dir, n)
	}
}

// Available reports the bytes still free on the disk.
func (d *Disk) Available() uint64 {
	d.t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(d.Dir, &st); err != nil {
		d.t.Fatalf("statfs %s: %v", d.Dir, err)
	}
	return st.Bavail * uint64(st.Bsize)
}

// Release removes what Fill wrote: the disk has room again.
func (d *Disk) Release() {
	d.t.Helper()
	if d.filler == "" {
		return
	}
	if err := os.Remove(d.filler); err != nil {
		d.t.Fatalf("free %s: %v", d.Dir, err)
	}
	d.filler = ""
}
