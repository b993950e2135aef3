package device

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/leaktest"
)

// nullBackend is the backend list of every capture test: miniaudio's null
// backend records silence in real time, with no sound hardware.
var nullBackend = []malgo.Backend{NullBackend}

// openNull opens a capture on the null backend, skipping the test if this
// environment cannot (it should always be able to: the null backend needs
// nothing but threads).
func openNull(t *testing.T, cfg CaptureConfig) *Capture {
	t.Helper()
	cfg.Backends = nullBackend
	return openedOnNull(t, "OpenCapture", func() (*Capture, error) { return OpenCapture(context.Background(), cfg) })
}

// openedOnNull opens a device on the null backend with open, named what
// in messages, skipping the test if this environment cannot; the test's
// cleanup closes it.
func openedOnNull[D interface{ Close() error }](t testing.TB, what string, open func() (D, error)) D {
	t.Helper()
	d, err := open()
	if errors.Is(err, ErrNoAudioBackend) {
		t.Skipf("miniaudio's null backend does not start here: %v", err)
	}
	if err != nil {
		t.Fatalf("%s on the null backend: %v", what, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func TestCaptureNullBackend(t *testing.T) {
	leaktest.Check(t)
	tests := []struct {
		name      string
		cfg       CaptureConfig
		wantRate  int
		wantCh    int
		wantFrame int // samples per frame, all channels
	}{
		{"defaults", CaptureConfig{}, 16000, 1, 320},
		{"16k 10ms", CaptureConfig{SampleRate: 16000, FrameDuration: 10 * time.Millisecond}, 16000, 1, 160},
		{"48k stereo", CaptureConfig{SampleRate: 48000, Channels: 2}, 48000, 2, 1920},
		{"44.1k 30ms", CaptureConfig{SampleRate: 44100, FrameDuration: 30 * time.Millisecond}, 44100, 1, 1323},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opened := time.Now()
			c := openNull(t, tt.cfg)
			if f := c.Format(); f != (audio.Format{Encoding: audio.EncodingLinear16, SampleRate: tt.wantRate, Channels: tt.wantCh}) {
				t.Fatalf("format %+v", f)
			}
			const frames = 5
			for i := range frames {
				frame, err := c.Read(context.Background())
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if len(frame) != tt.wantFrame {
					t.Fatalf("frame %d has %d samples, want %d", i, len(frame), tt.wantFrame)
				}
				for j, v := range frame {
					if v != 0 {
						t.Fatalf("frame %d sample %d is %d; the null backend records silence", i, j, v)
					}
				}
			}
			// The null device runs in real time: it cannot have delivered
			// more than the time since it opened, plus a period.
			elapsed := time.Since(opened)
			if captured := c.Captured(); captured > elapsed+maxPeriodMillis*time.Millisecond {
				t.Errorf("%v of audio captured in %v: faster than real time", captured, elapsed)
			}
			if want := frames * c.FrameDuration(); c.Captured() < want {
				t.Errorf("read %v of audio but only %v captured", want, c.Captured())
			}
			if c.Overruns() != 0 {
				t.Errorf("%d overruns while reading continuously", c.Overruns())
			}
		})
	}
}

// TestCaptureReadWakes: a Read waiting for audio returns at once when its
// context ends or the capture is closed, and a closed capture stays closed.
func TestCaptureReadWakes(t *testing.T) {
	leaktest.Check(t)
	// Long frames: each Read below has nothing to return for 400 ms.
	cfg := CaptureConfig{FrameDuration: 400 * time.Millisecond}

	t.Run("context", func(t *testing.T) {
		c := openNull(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Read(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Read returned %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 300*time.Millisecond {
			t.Errorf("Read returned %v after cancel", d)
		}
		// The capture still works afterwards.
		if _, err := c.Read(context.Background()); err != nil {
			t.Errorf("Read after a cancelled Read: %v", err)
		}
		// An already-ended context is reported even with audio waiting.
		ended, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if _, err := c.Read(ended); !errors.Is(err, context.Canceled) {
			t.Errorf("Read with an ended context: %v", err)
		}
	})

	t.Run("close", func(t *testing.T) {
		c := openNull(t, cfg)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(context.Background())
			errc <- err
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if !errors.Is(err, audio.ErrSourceClosed) {
				t.Errorf("blocked Read returned %v, want audio.ErrSourceClosed", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Close did not wake the blocked Read")
		}
		if d := time.Since(start); d > 300*time.Millisecond {
			t.Errorf("Close and wake took %v", d)
		}
		if _, err := c.Read(context.Background()); !errors.Is(err, audio.ErrSourceClosed) {
			t.Errorf("Read after Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestCaptureStopsOnClose: once Close returns, miniaudio's thread no
// longer delivers audio.
func TestCaptureStopsOnClose(t *testing.T) {
	leaktest.Check(t)
	c := openNull(t, CaptureConfig{})
	deadline := time.Now().Add(2 * time.Second)
	for c.Captured() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if c.Captured() == 0 {
		t.Fatal("no audio captured in 2 s")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	at := c.Captured()
	time.Sleep(100 * time.Millisecond)
	if got := c.Captured(); got != at {
		t.Errorf("captured %v after Close (was %v)", got, at)
	}
}

// TestCaptureConcurrentClose: Close racing with Read and with itself, under
// the race detector.
func TestCaptureConcurrentClose(t *testing.T) {
	leaktest.Check(t)
	for range 3 {
		c := openNull(t, CaptureConfig{FrameDuration: 5 * time.Millisecond})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				if _, err := c.Read(context.Background()); err != nil {
					if !errors.Is(err, audio.ErrSourceClosed) {
						t.Errorf("Read: %v", err)
					}
					return
				}
			}
		})
		time.Sleep(30 * time.Millisecond)
		wg.Go(func() { c.Close() })
		wg.Go(func() { c.Close() })
		wg.Wait()
	}
}

// TestCaptureOverrun: a reader that falls behind loses the oldest audio,
// counted, and then reads the newest buffered audio at once.
func TestCaptureOverrun(t *testing.T) {
	c := openNull(t, CaptureConfig{BufferDuration: 100 * time.Millisecond})
	time.Sleep(400 * time.Millisecond)
	if c.Overruns() == 0 {
		t.Fatal("no overrun counted after 400 ms unread with a 100 ms buffer")
	}
	captured, dropped := c.Captured(), c.Dropped()
	if dropped < 200*time.Millisecond || dropped > captured-100*time.Millisecond+20*time.Millisecond {
		t.Errorf("dropped %v of %v captured; want all but about the last 100 ms", dropped, captured)
	}
	// What is left (about 100 ms, five frames) comes without waiting.
	start := time.Now()
	for i := range 4 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if d := time.Since(start); d > 60*time.Millisecond {
		t.Errorf("reading the buffered frames took %v", d)
	}
}

func TestInputDevicesNullBackend(t *testing.T) {
	devs, err := InputDevices(context.Background(), nullBackend...)
	if errors.Is(err, ErrNoAudioBackend) {
		t.Skipf("miniaudio's null backend does not start here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 {
		t.Fatalf("null backend lists %d capture devices, want 1: %+v", len(devs), devs)
	}
	d := devs[0]
	if d.ID == "" || d.Name == "" || !d.Default {
		t.Errorf("device %+v: want an ID, a name and Default", d)
	}
	// The listed ID opens the device.
	c := openNull(t, CaptureConfig{DeviceID: d.ID})
	if _, err := c.Read(context.Background()); err != nil {
		t.Errorf("Read from device %q: %v", d.ID, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := InputDevices(ctx, nullBackend...); !errors.Is(err, context.Canceled) {
		t.Errorf("InputDevices with an ended context: %v", err)
	}
}

func TestOpenCaptureErrors(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []openErrorCase[CaptureConfig]{
		{"unknown device", context.Background(), CaptureConfig{DeviceID: "no-such-microphone"}, ErrNoDevice},
		{"unknown hex device", context.Background(), CaptureConfig{DeviceID: "hex:0102"}, ErrNoDevice},
		{"invalid device ID", context.Background(), CaptureConfig{DeviceID: "hex:zz"}, nil},
		{"rate", context.Background(), CaptureConfig{SampleRate: 100}, nil},
		{"channels", context.Background(), CaptureConfig{Channels: 64}, nil},
		{"frame duration", context.Background(), CaptureConfig{FrameDuration: 2 * time.Second}, nil},
		{"buffer duration", context.Background(), CaptureConfig{BufferDuration: -time.Second}, nil},
		{"ended context", ended, CaptureConfig{}, context.Canceled},
		{"custom backend", context.Background(), CaptureConfig{Backends: []malgo.Backend{malgo.BackendNull}}, ErrNoAudioBackend},
	}
	checkOpenErrors(t, tests, func(ctx context.Context, cfg CaptureConfig) (*Capture, error) {
		if cfg.Backends == nil {
			cfg.Backends = nullBackend
		}
		return OpenCapture(ctx, cfg)
	})
}

// openErrorCase is a configuration an Open function refuses, and the
// error it must match (nil: any error).
type openErrorCase[C any] struct {
	name string
	ctx  context.Context
	cfg  C
	want error
}

// checkOpenErrors checks that open refuses every case as it wants.
func checkOpenErrors[C any, D interface{ Close() error }](t *testing.T, tests []openErrorCase[C], open func(context.Context, C) (D, error)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := open(tt.ctx, tt.cfg)
			if err == nil {
				d.Close()
				t.Fatal("opened")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %q does not match %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}

// TestOpenCaptureDefaultBackends opens the default microphone with the
// platform's backends. On a machine without sound hardware (CI) that
// fails, and the error must say so in one of the plain-words errors; the
// null backend must never be picked silently.
func TestOpenCaptureDefaultBackends(t *testing.T) {
	c, err := OpenCapture(context.Background(), CaptureConfig{})
	if err == nil {
		defer c.Close()
		devs, derr := InputDevices(context.Background())
		if derr != nil {
			t.Fatalf("a microphone opened but listing fails: %v", derr)
		}
		t.Logf("a real microphone opened; devices: %+v", devs)
		return
	}
	t.Logf("no microphone here: %v", err)
	if !errors.Is(err, ErrNoAudioBackend) && !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrDeviceUnavailable) && !errors.Is(err, ErrPermissionDenied) {
		t.Errorf("error %q matches none of the plain-words errors", err)
	}
	if strings.Contains(err.Error(), "NULL Capture Device") {
		t.Error("fell back to the null backend")
	}
}

// TestClassify: miniaudio's results map to the plain-words errors, keep
// the original error, and carry the backend's message.
func TestClassify(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{malgo.ErrNoBackend, ErrNoAudioBackend},
		{malgo.ErrFailedToInitBackend, ErrNoAudioBackend},
		{malgo.ErrNoDevice, ErrNoDevice},
		{malgo.ErrDoesNotExist, ErrNoDevice},
		{malgo.ErrAccessDenied, ErrPermissionDenied},
		{malgo.ErrBusy, ErrDeviceUnavailable},
		{malgo.ErrFailedToOpenBackendDevice, ErrDeviceUnavailable},
		{malgo.ErrFailedToStartBackendDevice, ErrDeviceUnavailable},
		{malgo.ErrOutOfMemory, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in.Error(), func(t *testing.T) {
			var log backendLog
			log.record("Loading symbol: snd_pcm_open\n")
			log.record("[ALSA] snd_pcm_open() failed when trying to open an appropriate default device.")
			log.record("Failed to open backend device.\n")
			err := classify(tt.in, &log)
			if !errors.Is(err, tt.in) {
				t.Errorf("%q lost the original error", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("%q does not match %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "[ALSA] snd_pcm_open() failed") {
				t.Errorf("%q lacks the backend's message", err)
			}
		})
	}
}

func TestDeviceID(t *testing.T) {
	var wasapi malgo.DeviceID // UTF-16: not printable
	copy(wasapi[:], "{\x000\x00.\x000\x00}\x00")
	var text malgo.DeviceID
	copy(text[:], "alsa_input.pci-0000_00_1f.3.analog-stereo")
	var tricky malgo.DeviceID
	copy(tricky[:], "hex:00")
	var full malgo.DeviceID
	for i := range full {
		full[i] = 'a'
	}
	tests := []struct {
		name string
		id   malgo.DeviceID
		want string
	}{
		{"zero", malgo.DeviceID{}, "hex:00"},
		{"integer", malgo.DeviceID{7}, "hex:07"},
		{"text", text, "alsa_input.pci-0000_00_1f.3.analog-stereo"},
		{"utf16", wasapi, "hex:7b0030002e0030007d"},
		{"text that looks like hex", tricky, "hex:6865783a3030"},
		{"unterminated text", full, strings.Repeat("a", len(full))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := encodeDeviceID(tt.id)
			if s != tt.want {
				t.Errorf("encoded as %q, want %q", s, tt.want)
			}
			back, err := ParseDeviceID(s)
			if err != nil || back != tt.id {
				t.Errorf("ParseDeviceID(%q) = %v, %v; want the original", s, back, err)
			}
		})
	}
	for _, bad := range []string{"", "hex:", "hex:0", "hex:zz", "tab\there", "é", "hex:" + strings.Repeat("00", len(full)+1), strings.Repeat("a", len(full)+1)} {
		if _, err := ParseDeviceID(bad); err == nil {
			t.Errorf("ParseDeviceID(%q) accepted", bad)
		}
	}
}

// FuzzParseDeviceID: device IDs come from configuration files. Parsing
// never panics, and whatever parses survives a round trip.
func FuzzParseDeviceID(f *testing.F) {
	for _, s := range []string{"", "default", "hex:00", "hex:7b0030", "hex:", "hex:0", "alsa_input.usb-0d8c", "\x00", "hex:6865783a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseDeviceID(s)
		if err != nil {
			return
		}
		enc := encodeDeviceID(id)
		again, err := ParseDeviceID(enc)
		if err != nil || again != id {
			t.Fatalf("%q parsed, encoded as %q, which parses to %v, %v", s, enc, again, err)
		}
	})
}

// ExampleInputDevices lists the microphones of the null backend, the one
// that needs no sound hardware.
func ExampleInputDevices() {
	devs, err := InputDevices(context.Background(), NullBackend)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		fmt.Printf("%s %q default=%v\n", d.ID, d.Name, d.Default)
	}
	// Output: hex:00 "NULL Capture Device" default=true
}

func TestDistinctNames(t *testing.T) {
	devs := distinctNames([]Device{
		{ID: "meet", Name: "Null Output"},
		{ID: "hex:00ff", Name: "Headset"},
		{ID: "other", Name: "Null Output"},
		{ID: "hex:01ff", Name: "Headset"},
		{ID: "alsa_output.pci", Name: "Built-in Audio"},
	})
	want := []string{"Null Output (meet)", "Headset (1)", "Null Output (other)", "Headset (2)", "Built-in Audio"}
	for i, d := range devs {
		if d.Name != want[i] {
			t.Errorf("device %s is named %q, want %q", d.ID, d.Name, want[i])
		}
	}
}
