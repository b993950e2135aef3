//go:build !windows

package store

import "syscall"

// diskFullErrnos are the system's errors of a full disk or quota.
var diskFullErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT}
