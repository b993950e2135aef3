package device

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestNoSoundCardQuietAndPlain opens the system's default microphone and
// speaker as the app does, with the standard error of the process caught.
// ALSA writes some thirty lines there on a machine without a sound card
// (as CI is) unless it is silenced; and a machine whose only devices are
// ALSA's null plugin has no microphone and no speaker, which is what the
// errors must say (not "busy"), and what the lists must show.
func TestNoSoundCardQuietAndPlain(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(w.Fd()), 2); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ins, inErr := InputDevices(ctx)
	outs, outErr := OutputDevices(ctx)
	c, capErr := OpenCapture(ctx, CaptureConfig{})
	if capErr == nil {
		c.Close()
	}
	p, playErr := OpenPlayback(ctx, PlaybackConfig{})
	if playErr == nil {
		p.Close()
	}
	_ = syscall.Dup2(saved, 2)
	syscall.Close(saved)
	w.Close()
	var printed strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		printed.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if strings.Contains(printed.String(), "ALSA lib") {
		t.Errorf("ALSA wrote to standard error:\n%s", printed.String())
	}
	for _, d := range append(ins, outs...) {
		if pseudoDevice(d) {
			t.Errorf("offered %+v", d)
		}
	}
	if inErr == nil && len(ins) == 0 && capErr != nil && !errors.Is(capErr, ErrNoDevice) && !errors.Is(capErr, ErrNoAudioBackend) {
		t.Errorf("no microphone listed, and opening the default says %v", capErr)
	}
	if outErr == nil && len(outs) == 0 && playErr != nil && !errors.Is(playErr, ErrNoOutputDevice) && !errors.Is(playErr, ErrNoAudioBackend) {
		t.Errorf("no speaker listed, and opening the default says %v", playErr)
	}
	t.Logf("microphones %+v (%v), speakers %+v (%v); open: %v; %v", ins, inErr, outs, outErr, capErr, playErr)
}
