package ui

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"

	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

// topic is what a status line can tell about that changes under it.
type topic int

const (
	// aboutService: the service answered so, or could not be reached.
	// It changes with the backend, the region, the address or the key.
	aboutService topic = iota + 1
	// aboutDevices: the microphones or speakers were so. They change
	// when they are listed again (Refresh, or at start).
	aboutDevices
)

// staleLine is a status line that tells about a topic.
type staleLine struct {
	what  topic
	label *widget.Label
	said  string // what it said of the topic
	idle  string // what it says once that is old news
}

// noteStatus records that label, which shows err (or a warning about what
// err is about), tells about the service or the devices when err does:
// once they change (changed), the line says idle again, unless it has
// moved on to something else meanwhile. Call it on the UI goroutine,
// after setting the label's text.
func (a *App) noteStatus(label *widget.Label, err error, idle string) {
	what := errorTopic(err)
	if what == 0 || label == nil {
		return
	}
	for i, l := range a.stale {
		if l.label == label {
			a.stale[i] = staleLine{what: what, label: label, said: label.Text, idle: idle}
			return
		}
	}
	a.stale = append(a.stale, staleLine{what: what, label: label, said: label.Text, idle: idle})
}

// changed clears every status line that still tells of what was, as
// of before the change: one place for every tab, called where the
// backend, the key or the devices are known to have changed. Call it on
// the UI goroutine.
func (a *App) changed(what topic) {
	kept := a.stale[:0]
	for _, l := range a.stale {
		switch {
		case l.what != what:
			kept = append(kept, l)
		case l.label.Text == l.said:
			l.label.Importance = widget.MediumImportance
			l.label.SetText(l.idle)
		}
	}
	a.stale = kept
}

// errorTopic tells what err is about: the service, the audio devices,
// or neither (0: a file, the history, a mistake of the person's).
func errorTopic(err error) topic {
	if err == nil {
		return 0
	}
	var spk *sessions.SpeakerError
	switch {
	case errors.As(err, &spk), errors.Is(err, device.ErrNoDevice), errors.Is(err, device.ErrNoAudioBackend),
		errors.Is(err, device.ErrDeviceUnavailable), errors.Is(err, device.ErrPermissionDenied),
		errors.Is(err, device.ErrDeviceStopped), errors.Is(err, device.ErrNoOutputDevice):
		return aboutDevices
	}
	var (
		sc  statusCoder
		ae  *api.Error
		dns *net.DNSError
		op  *net.OpError
		ue  *url.Error
	)
	switch {
	case errors.As(err, &ae), errors.As(err, &sc), errors.As(err, &dns), errors.As(err, &op), errors.As(err, &ue),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, sessions.ErrNoKey), errors.Is(err, sessions.ErrNoLocalEngine):
		return aboutService
	}
	return 0
}
