package device

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdarg.h>

typedef void (*earshot_alsa_handler)(const char *file, int line, const char *function, int err, const char *fmt, ...);

// earshot_alsa_quiet takes ALSA's messages and drops them.
static void earshot_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
	(void)file; (void)line; (void)function; (void)err; (void)fmt;
}

// earshot_alsa_silence loads ALSA, if it is installed, and gives it the
// quiet handler. The library is never closed, so the handler stays in
// place for the copy miniaudio loads (the same library, loaded once).
// It returns 0 on success, 1 without ALSA, 2 when it lacks the call.
static int earshot_alsa_silence(void) {
	void *lib = dlopen("libasound.so.2", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		lib = dlopen("libasound.so", RTLD_NOW | RTLD_GLOBAL);
	}
	if (lib == NULL) {
		return 1;
	}
	int (*set)(earshot_alsa_handler) = (int (*)(earshot_alsa_handler))dlsym(lib, "snd_lib_error_set_handler");
	if (set == NULL) {
		return 2;
	}
	set(earshot_alsa_quiet);
	return 0;
}
*/
import "C"

import "sync"

var silenceALSA = sync.OnceFunc(func() { C.earshot_alsa_silence() })

// quietBackends stops ALSA printing its own messages to the process's
// standard error: on a machine without a sound card it writes some thirty
// lines for each device it looks for, before Earshot can say in one line
// what is wrong. What matters of them reaches Earshot through miniaudio's
// log (backendLog).
func quietBackends() { silenceALSA() }
