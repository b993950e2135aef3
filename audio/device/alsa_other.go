//go:build !linux

package device

// quietBackends has nothing to silence: only ALSA, on Linux, writes to
// the process's standard error.
func quietBackends() {}
