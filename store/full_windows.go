package store

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// diskFullErrnos are the system's errors of a full disk or quota.
var diskFullErrnos = []syscall.Errno{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED}

// noRoom reports whether the disk that holds dir has no byte left that
// the user may write; false when it cannot tell.
func noRoom(dir string) bool {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return false
	}
	var free uint64
	return windows.GetDiskFreeSpaceEx(p, &free, nil, nil) == nil && free == 0
}
