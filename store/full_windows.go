package store

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// diskFullErrnos are the system's errors of a full disk or quota.
var diskFullErrnos = []syscall.Errno{windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL, windows.ERROR_DISK_QUOTA_EXCEEDED}
