package main

import (
	"os"
	"syscall"
)

// The Windows build is a GUI program (the fyne tool links it so), which
// Windows starts without a console. A command run from a terminal
// (`earshot version`, `earshot transcribe ...`) writes to that terminal:
// the process attaches to its parent's console, and the streams that
// were not redirected to a file or a pipe are opened on it.
func init() {
	if len(os.Args) < 2 {
		return
	}
	attach := syscall.NewLazyDLL("kernel32.dll").NewProc("AttachConsole")
	if attach.Find() != nil {
		return
	}
	// A stream redirected to a file or a pipe has a handle before the
	// console is attached; it is kept.
	redirected := func(std int) bool {
		h, err := syscall.GetStdHandle(std)
		return err == nil && h != 0 && h != syscall.InvalidHandle
	}
	out, errOut, in := redirected(syscall.STD_OUTPUT_HANDLE), redirected(syscall.STD_ERROR_HANDLE), redirected(syscall.STD_INPUT_HANDLE)
	const parentProcess = ^uint32(0) // ATTACH_PARENT_PROCESS
	if ok, _, _ := attach.Call(uintptr(parentProcess)); ok == 0 {
		return // started from Explorer: no console to write to
	}
	reopen := func(f **os.File, keep bool, name string, flag int) {
		if keep {
			return
		}
		if c, err := os.OpenFile(name, flag, 0); err == nil {
			*f = c
		}
	}
	reopen(&os.Stdout, out, "CONOUT$", os.O_WRONLY)
	reopen(&os.Stderr, errOut, "CONOUT$", os.O_WRONLY)
	reopen(&os.Stdin, in, "CONIN$", os.O_RDONLY)
}
