//go:build linux && cgo && !wayland

package ui

/*
#cgo pkg-config: x11
#include <X11/Xlib.h>
#include <X11/Xatom.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>

// The X connections of the overlay's watchers, and the last error each
// had. Xlib's error handler is one for the whole process, and by default
// it ends the process: a window gone while a watcher looks at it (the app
// quitting) must not.
#define EA_MAX 8
static pthread_mutex_t ea_mu = PTHREAD_MUTEX_INITIALIZER;
static Display *ea_displays[EA_MAX];
static int ea_errors[EA_MAX];
static XErrorHandler ea_prev;
static int ea_installed;

static int ea_on_error(Display *d, XErrorEvent *e) {
	int ours = 0;
	pthread_mutex_lock(&ea_mu);
	for (int i = 0; i < EA_MAX; i++) {
		if (ea_displays[i] == d) {
			ea_errors[i] = e->error_code;
			ours = 1;
		}
	}
	XErrorHandler prev = ea_prev;
	pthread_mutex_unlock(&ea_mu);
	if (ours || prev == NULL) {
		return 0;
	}
	return prev(d, e);
}

// ea_install puts ea_on_error in front of the handler in place. Call it
// on the thread that runs GLFW, so that it never lands between GLFW's own
// setting and restoring of the handler.
static void ea_install(void) {
	pthread_mutex_lock(&ea_mu);
	if (!ea_installed) {
		ea_prev = XSetErrorHandler(ea_on_error);
		ea_installed = 1;
	}
	pthread_mutex_unlock(&ea_mu);
}

// ea_take_error returns, and clears, the last error of d's requests.
static int ea_take_error(Display *d) {
	int err = 0;
	pthread_mutex_lock(&ea_mu);
	for (int i = 0; i < EA_MAX; i++) {
		if (ea_displays[i] == d) {
			err = ea_errors[i];
			ea_errors[i] = 0;
		}
	}
	pthread_mutex_unlock(&ea_mu);
	return err;
}

typedef struct {
	Display *dpy;
	Window win, root;
	Atom state, above, supported, check;
} ea_conn;

// ea_open connects to the X server of $DISPLAY, on a connection of its
// own, and watches win's moves and state. NULL if it cannot.
static ea_conn *ea_open(unsigned long win) {
	Display *d = XOpenDisplay(NULL);
	if (d == NULL) {
		return NULL;
	}
	int slot = -1;
	pthread_mutex_lock(&ea_mu);
	for (int i = 0; i < EA_MAX && slot < 0; i++) {
		if (ea_displays[i] == NULL) {
			ea_displays[i] = d;
			ea_errors[i] = 0;
			slot = i;
		}
	}
	pthread_mutex_unlock(&ea_mu);
	if (slot < 0) {
		XCloseDisplay(d);
		return NULL;
	}
	ea_conn *c = calloc(1, sizeof *c);
	c->dpy = d;
	c->win = win;
	c->root = DefaultRootWindow(d);
	c->state = XInternAtom(d, "_NET_WM_STATE", False);
	c->above = XInternAtom(d, "_NET_WM_STATE_ABOVE", False);
	c->supported = XInternAtom(d, "_NET_SUPPORTED", False);
	c->check = XInternAtom(d, "_NET_SUPPORTING_WM_CHECK", False);
	XSelectInput(d, win, StructureNotifyMask | PropertyChangeMask);
	XSync(d, False);
	return c;
}

static void ea_close(ea_conn *c) {
	Display *d = c->dpy;
	XCloseDisplay(d);
	pthread_mutex_lock(&ea_mu);
	for (int i = 0; i < EA_MAX; i++) {
		if (ea_displays[i] == d) {
			ea_displays[i] = NULL;
		}
	}
	pthread_mutex_unlock(&ea_mu);
	free(c);
}

// ea_has_atom reports whether the atom list property prop of w holds a.
static int ea_has_atom(ea_conn *c, Window w, Atom prop, Atom a) {
	Atom type;
	int format;
	unsigned long n = 0, after;
	unsigned char *data = NULL;
	int found = 0;
	if (XGetWindowProperty(c->dpy, w, prop, 0, 4096, False, XA_ATOM, &type, &format, &n, &after, &data) == Success && data != NULL) {
		if (type == XA_ATOM && format == 32) {
			Atom *atoms = (Atom *)data;
			for (unsigned long i = 0; i < n; i++) {
				if (atoms[i] == a) {
					found = 1;
				}
			}
		}
		XFree(data);
	}
	return found;
}

// ea_wm tells what the window manager can do: 0 none runs (as far as
// EWMH tells), 1 it runs and cannot keep windows above others, 2 it can.
static int ea_wm(ea_conn *c) {
	Atom type;
	int format;
	unsigned long n = 0, after;
	unsigned char *data = NULL;
	int running = 0;
	if (XGetWindowProperty(c->dpy, c->root, c->check, 0, 1, False, XA_WINDOW, &type, &format, &n, &after, &data) == Success && data != NULL) {
		running = type == XA_WINDOW && n == 1;
		XFree(data);
	}
	if (!running) {
		return 0;
	}
	return ea_has_atom(c, c->root, c->supported, c->above) ? 2 : 1;
}

static int ea_is_above(ea_conn *c) { return ea_has_atom(c, c->win, c->state, c->above); }

static int ea_viewable(ea_conn *c) {
	XWindowAttributes a;
	return XGetWindowAttributes(c->dpy, c->win, &a) && a.map_state == IsViewable;
}

// ea_ask_above asks the window manager to keep the window above others
// (EWMH: a _NET_WM_STATE client message to the root window).
static void ea_ask_above(ea_conn *c) {
	XEvent e = {0};
	e.xclient.type = ClientMessage;
	e.xclient.window = c->win;
	e.xclient.message_type = c->state;
	e.xclient.format = 32;
	e.xclient.data.l[0] = 1; // _NET_WM_STATE_ADD
	e.xclient.data.l[1] = (long)c->above;
	e.xclient.data.l[2] = 0;
	e.xclient.data.l[3] = 1; // from an application
	XSendEvent(c->dpy, c->root, False, SubstructureRedirectMask | SubstructureNotifyMask, &e);
	XFlush(c->dpy);
}

// ea_position finds where the window's top left corner is on the
// screen, as GLFW and so Fyne place it. 0 if the window is gone.
static int ea_position(ea_conn *c, int *x, int *y) {
	Window child;
	return XTranslateCoordinates(c->dpy, c->win, c->root, 0, 0, x, y, &child) && ea_take_error(c->dpy) == 0;
}

// ea_bring_back moves the window into the middle of the screen when no
// part of it is on the screen: a place saved on a monitor since
// unplugged.
static void ea_bring_back(ea_conn *c) {
	XWindowAttributes a;
	int x, y;
	if (!XGetWindowAttributes(c->dpy, c->win, &a) || !ea_position(c, &x, &y)) {
		return;
	}
	XWindowAttributes r;
	if (!XGetWindowAttributes(c->dpy, c->root, &r)) {
		return;
	}
	const int margin = 40;
	if (x + a.width > margin && y + a.height > margin && x < r.width - margin && y < r.height - margin) {
		return;
	}
	XMoveWindow(c->dpy, c->win, (r.width - a.width) / 2, (r.height - a.height) / 2);
	XFlush(c->dpy);
}

// What ea_wait saw.
enum {
	EA_CONFIGURED = 1,
	EA_STATE = 2,
	EA_MAPPED = 4,
	EA_GONE = 8,
	EA_CANCELLED = 16,
};

// ea_wait takes the events that arrived, or waits up to ms (-1 for ever)
// for one, or for the file cancel to be readable; it returns what it saw,
// 0 if nothing (time is up, or a signal came).
static int ea_wait(ea_conn *c, int cancel, int ms) {
	int got = 0;
	for (;;) {
		while (XPending(c->dpy) > 0) {
			XEvent e;
			XNextEvent(c->dpy, &e);
			switch (e.type) {
			case ConfigureNotify:
				got |= EA_CONFIGURED;
				break;
			case PropertyNotify:
				if (e.xproperty.atom == c->state) {
					got |= EA_STATE;
				}
				break;
			case MapNotify:
			case UnmapNotify:
			case ReparentNotify:
				got |= EA_MAPPED;
				break;
			case DestroyNotify:
				got |= EA_GONE;
				break;
			}
		}
		if (got) {
			return got;
		}
		struct pollfd p[2] = {{ConnectionNumber(c->dpy), POLLIN, 0}, {cancel, POLLIN, 0}};
		int n = poll(p, 2, ms);
		if (n <= 0) {
			return 0;
		}
		if (p[1].revents) {
			return EA_CANCELLED;
		}
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			return EA_GONE;
		}
	}
}
*/
import "C"

import (
	"context"
	"os"
	"time"

	"fyne.io/fyne/v2/driver"
)

// keepAbove asks the window manager to keep the overlay above other
// windows, and watches where the window goes, for as long as this
// showing lasts. On X11 that is EWMH's _NET_WM_STATE_ABOVE, asked for
// with a client message to the root window, over a connection of its own
// and off the UI goroutine; the window manager removes the state when
// the window is hidden, so every showing asks again. Elsewhere (Wayland,
// Fyne's test driver) it only says why the overlay is not kept above.
func (o *overlay) keepAbove() {
	native := o.nativeContext()
	x, ok := native.(driver.X11WindowContext)
	if !ok || x.WindowHandle == 0 {
		o.aboveResult(o.gen, aboveProblemOf(native))
		return
	}
	// This is the UI goroutine, the thread GLFW runs on.
	C.ea_install()
	gen, win := o.gen, x.WindowHandle
	ctx, cancel := context.WithCancel(o.app.ctx)
	o.stopKeeping = cancel
	started := o.app.goAsync(func(context.Context) {
		watchX11(ctx, win, overlayAboveTimeout,
			func(problem string) { o.app.onUI(func() { o.aboveResult(gen, problem) }) },
			func(x, y int) { o.app.onUI(func() { o.moved(gen, x, y) }) })
	})
	if !started {
		cancel()
	}
}

// watchX11 keeps the X window win above other windows until ctx is done,
// and reports where it is. It calls above once, with "" when the window
// manager has put win above others, or why it has not within timeout;
// and moved with the window's place on the screen, at first and
// whenever it changes.
func watchX11(ctx context.Context, win uintptr, timeout time.Duration, above func(problem string), moved func(x, y int)) {
	c := C.ea_open(C.ulong(win))
	if c == nil {
		above(aboveNoX)
		return
	}
	defer C.ea_close(c)
	// Closing w wakes the wait below when ctx is done.
	r, w, err := os.Pipe()
	if err != nil {
		above(aboveNoX)
		return
	}
	defer r.Close()
	stop := context.AfterFunc(ctx, func() { w.Close() })
	defer func() {
		if stop() {
			w.Close()
		}
	}()
	cancelFD := C.int(r.Fd())

	done := false // above has been called
	switch C.ea_wm(c) {
	case 0:
		above(aboveNoWM)
		done = true
	case 1:
		above(aboveWMCannot)
		done = true
	}
	deadline := time.Now().Add(timeout)
	asked, checked := false, false
	var lastX, lastY C.int
	seen := false
	for ctx.Err() == nil {
		viewable := C.ea_viewable(c) != 0
		if viewable && !checked {
			checked = true
			C.ea_bring_back(c)
		}
		if !done {
			switch {
			case C.ea_is_above(c) != 0:
				above("")
				done = true
			case time.Now().After(deadline):
				above(aboveWMIgnored)
				done = true
			case viewable && !asked:
				C.ea_ask_above(c)
				asked = true
			}
		}
		var x, y C.int
		if viewable && C.ea_position(c, &x, &y) != 0 && (!seen || x != lastX || y != lastY) {
			seen, lastX, lastY = true, x, y
			moved(int(x), int(y))
		}
		wait := C.int(-1)
		if !done {
			wait = C.int(max(time.Until(deadline).Milliseconds(), 1))
		}
		if C.ea_wait(c, cancelFD, wait)&(C.EA_GONE|C.EA_CANCELLED) != 0 {
			return
		}
	}
}
