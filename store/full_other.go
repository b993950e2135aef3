//go:build !windows

package store

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// diskFullErrnos are the system's errors of a full disk or quota.
var diskFullErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT}

// noRoom reports whether the disk that holds dir has no byte left that
// the user may write; false when it cannot tell.
func noRoom(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Bavail == 0
}
