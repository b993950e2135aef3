// Package device captures audio from the machine's input devices and plays
// audio on its outputs, through miniaudio (malgo). It is apart from package
// audio so that what decodes audio, such as the local engine, does not link
// a device library.
package device

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio"
)

// Errors from opening and running the microphone, in plain words. They are
// matched with errors.Is; the wrapping error adds miniaudio's own error and
// the audio backend's last message, for diagnosis.
var (
	// ErrNoAudioBackend means no audio system could be started: on Linux
	// neither PulseAudio (or PipeWire's PulseAudio service) nor ALSA.
	ErrNoAudioBackend = errors.New("no audio system is available")
	// ErrNoDevice means there is no microphone, or the configured one is
	// not connected.
	ErrNoDevice = errors.New("no microphone was found")
	// ErrDeviceUnavailable means the microphone exists but could not be
	// opened, typically because another program holds it.
	ErrDeviceUnavailable = errors.New("the microphone is busy or could not be opened")
	// ErrPermissionDenied means the system refused access to the
	// microphone (a privacy setting).
	ErrPermissionDenied = errors.New("permission to use the microphone was denied")
	// ErrDeviceStopped is returned by Read when the microphone stopped on
	// its own, for instance because it was unplugged.
	ErrDeviceStopped = errors.New("the microphone stopped delivering audio")
)

// NullBackend is miniaudio's null backend: a capture device that delivers
// silence at the requested rate, in real time, with no sound hardware. Tests
// use it. (malgo.BackendNull is off by one in malgo's list and selects
// miniaudio's custom backend instead, which fails to start.)
const NullBackend = malgo.Backend(malgo.BackendNull + 1)

// maxPeriodMillis caps the device's period (how much audio each callback
// delivers) at 20 ms, whatever the frame duration.
const maxPeriodMillis = 20

// DefaultBufferDuration is how much audio a Capture keeps for a reader that
// falls behind before it drops the oldest.
const DefaultBufferDuration = 2 * time.Second

// Device is an audio input device.
type Device struct {
	// ID identifies the device to OpenCapture. It is stable across runs
	// and reboots (it is the backend's own identifier: the PulseAudio
	// source name, the ALSA device name, the Core Audio UID, the WASAPI
	// endpoint ID), so it can be stored in configuration. IDs made of
	// printable ASCII are the identifier itself; others are "hex:"
	// followed by its bytes in hexadecimal.
	ID string
	// Name is the device's human-readable name.
	Name string
	// Default reports whether the system uses this device by default.
	Default bool
}

// InputDevices lists the audio input devices of the first audio backend
// that starts, by default the platform's own (see CaptureConfig.Backends).
// The backend is asked afresh on every call, so devices plugged in since
// are listed. ctx is checked before the backend is asked; the query itself
// cannot be interrupted.
//
// The monitors of outputs (PulseAudio's, PipeWire's) are not
// microphones: SystemDevices lists them, as the sound the computer plays.
func InputDevices(ctx context.Context, backends ...malgo.Backend) ([]Device, error) {
	all, err := listDevices(ctx, microphone, backends)
	if err != nil {
		return nil, err
	}
	mics := all[:0]
	for _, d := range all {
		if !isMonitor(d) {
			mics = append(mics, d)
		}
	}
	return distinctNames(mics), nil
}

// listDevices lists the devices of one kind; see InputDevices.
func listDevices(ctx context.Context, kind deviceKind, backends []malgo.Backend) ([]Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var log backendLog
	mctx, err := initContext(backends, &log)
	if err != nil {
		return nil, fmt.Errorf("audio: list %ss: %w", kind.noun, err)
	}
	defer freeContext(mctx)
	infos, err := mctx.Devices(kind.typ)
	if err != nil {
		return nil, fmt.Errorf("audio: list %ss: %w", kind.noun, kind.classify(err, &log))
	}
	return realDevices(infos), nil
}

// realDevices returns the devices of infos that are devices.
func realDevices(infos []malgo.DeviceInfo) []Device {
	devs := make([]Device, 0, len(infos))
	for i := range infos {
		d := Device{
			ID:      encodeDeviceID(infos[i].ID),
			Name:    infos[i].Name(),
			Default: infos[i].IsDefault != 0,
		}
		if !pseudoDevice(d) {
			devs = append(devs, d)
		}
	}
	return devs
}

// distinctNames names apart the devices of devs that share a name (two
// PulseAudio null sinks are both "Null Output"; two USB headsets of a
// kind, likewise): each gets what tells them apart after its name, its
// ID as the system names it ("Null Output (meet)"), or its number among
// them when the ID is not for reading. A picker of identical entries
// cannot be chosen from, and a picker that finds options by name picks
// the first of them whichever was meant.
func distinctNames(devs []Device) []Device {
	count := map[string]int{}
	for _, d := range devs {
		count[d.Name]++
	}
	nth := map[string]int{}
	for i, d := range devs {
		if count[d.Name] < 2 {
			continue
		}
		nth[d.Name]++
		tag := strings.TrimSuffix(strings.TrimPrefix(d.ID, loopbackPrefix), ".monitor")
		if tag == "" || tag == d.Name || strings.HasPrefix(tag, "hex:") || len(tag) > 40 {
			tag = strconv.Itoa(nth[d.Name])
		}
		devs[i].Name = d.Name + " (" + tag + ")"
	}
	return devs
}

// pseudoDevice reports whether d is no device at all: ALSA's null plugin
// ("Discard all samples (playback) or generate zero samples (capture)"),
// which takes audio into nothing and gives zeros as fast as they are
// read. It is neither a microphone nor a speaker, and is not offered.
func pseudoDevice(d Device) bool {
	return d.ID == "null" || strings.HasPrefix(d.Name, "Discard all samples")
}

// CaptureConfig configures OpenCapture. The zero value opens the default
// microphone at 16 kHz mono in 20 ms frames.
type CaptureConfig struct {
	// DeviceID is a Device.ID from InputDevices; "" is the system's default
	// microphone.
	DeviceID string
	// SampleRate in Hz; 0 means 16000. miniaudio converts from the
	// device's own rate.
	SampleRate int
	// Channels; 0 means 1. miniaudio mixes or splits the device's own
	// channels.
	Channels int
	// FrameDuration is the length of the frames Read returns, 1 ms to 1 s;
	// 0 means audio.DefaultFrameDuration.
	FrameDuration time.Duration
	// BufferDuration is how much unread audio is kept when the reader
	// falls behind before the oldest is dropped; 0 means
	// DefaultBufferDuration. It is raised to at least two frames.
	BufferDuration time.Duration
	// Backends are the audio backends to try, in order; nil means the
	// platform's real backends (on Linux PulseAudio, ALSA, JACK). The
	// null backend is never tried unless named (use NullBackend, not
	// malgo.BackendNull), so a machine without an audio system reports
	// ErrNoAudioBackend instead of silently recording silence.
	Backends []malgo.Backend
}

// Capture is a microphone opened by OpenCapture: a audio.Source of the audio it
// records.
//
// miniaudio's device thread delivers audio to a callback that only copies
// it into a preallocated ring buffer (it never blocks, locks, logs or
// allocates); Read takes whole frames from there. If Read is not called
// often enough, the buffer fills and the oldest audio is dropped; Overruns
// and Dropped count it.
//
// audio.Format, Overruns, Dropped and Close are safe for concurrent use; Read
// must be called from one goroutine at a time.
type Capture struct {
	format audio.Format
	ring   *ring
	frame  []int16 // returned by Read, reused

	mctx *malgo.AllocatedContext
	dev  *malgo.Device

	done      chan struct{} // closed by Close
	closeOnce sync.Once
	closeErr  error

	stopped   atomic.Bool
	stoppedCh chan struct{} // closed when the device stopped on its own
}

// OpenCapture opens and starts a microphone. Recording starts at once and
// the audio is buffered until read. Close the Capture when done.
//
// ctx is checked before and after opening; opening itself cannot be
// interrupted (it takes milliseconds). Errors match ErrNoAudioBackend,
// ErrNoDevice, ErrDeviceUnavailable or ErrPermissionDenied when the cause
// is one of those.
func OpenCapture(ctx context.Context, cfg CaptureConfig) (*Capture, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.SampleRate == 0 {
		cfg.SampleRate = audio.SpeechRate
	}
	if cfg.Channels == 0 {
		cfg.Channels = 1
	}
	if cfg.FrameDuration == 0 {
		cfg.FrameDuration = audio.DefaultFrameDuration
	}
	if cfg.BufferDuration == 0 {
		cfg.BufferDuration = DefaultBufferDuration
	}
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: cfg.SampleRate, Channels: cfg.Channels}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("audio: open microphone: %w", err)
	}
	frames, err := audio.FrameLen(cfg.FrameDuration, f.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("audio: open microphone: %w", err)
	}
	if cfg.BufferDuration < 0 || cfg.BufferDuration > time.Minute {
		return nil, fmt.Errorf("audio: open microphone: buffer duration %v is outside 0..1m", cfg.BufferDuration)
	}
	// A WASAPI output recorded in loopback mode is opened by the
	// output's ID, with the device type that records what it plays.
	kind, configured := microphone, cfg.DeviceID
	if out, ok := loopbackID(cfg.DeviceID); ok {
		kind, configured = systemSound, out
	}
	id, err := parseConfiguredID(configured)
	if err != nil {
		return nil, fmt.Errorf("audio: open microphone: %w", err)
	}

	frameLen := frames * f.Channels
	bufFrames := max(int(int64(cfg.BufferDuration)*int64(f.SampleRate)/int64(time.Second)), 2*frames)
	c := &Capture{
		format:    f,
		ring:      newRing(bufFrames*f.Channels, frameLen, f.Channels),
		frame:     make([]int16, frameLen),
		done:      make(chan struct{}),
		stoppedCh: make(chan struct{}),
	}

	dcfg := malgo.DefaultDeviceConfig(kind.typ)
	dcfg.Capture.Format = malgo.FormatS16
	dcfg.Capture.Channels = uint32(f.Channels)
	dcfg.SampleRate = uint32(f.SampleRate)
	// Short periods keep latency low and Close quick: stopping a device
	// waits for the period under way to end.
	dcfg.PeriodSizeInFrames = uint32(min(frames, max(f.SampleRate/1000*maxPeriodMillis, 1)))
	var log backendLog
	mctx, dev, err := kind.initDevice(cfg.Backends, id, cfg.DeviceID, dcfg, malgo.DeviceCallbacks{
		Data: c.onData,
		Stop: c.onStop,
	}, &log)
	if err != nil {
		return nil, fmt.Errorf("audio: open microphone: %w", err)
	}
	c.mctx, c.dev = mctx, dev
	// miniaudio converts to the format asked for; check it did rather than
	// trust it, so a misconfigured device fails here and not as noise.
	if got := dev.CaptureFormat(); got != malgo.FormatS16 || dev.CaptureChannels() != uint32(f.Channels) || dev.SampleRate() != uint32(f.SampleRate) {
		c.Close()
		return nil, fmt.Errorf("audio: open microphone: %w: the device delivers format %d, %d channels, %d Hz instead of 16-bit, %d channels, %d Hz",
			ErrDeviceUnavailable, got, dev.CaptureChannels(), dev.SampleRate(), f.Channels, f.SampleRate)
	}
	if err := kind.start(dev, &log); err != nil {
		c.Close()
		return nil, err
	}
	mctx.SetLogProc(nil) // the backend's messages are only wanted for open errors
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// onData is miniaudio's data callback, on the device thread: copy and
// return. It must never block, lock, log or allocate.
func (c *Capture) onData(_, in []byte, _ uint32) {
	c.ring.writeBytes(in)
}

// onStop is miniaudio's stop callback: the device stopped on its own (Close
// unregisters the callbacks before stopping the device).
func (c *Capture) onStop() {
	if c.stopped.CompareAndSwap(false, true) {
		close(c.stoppedCh)
	}
}

// Format returns the format of the frames Read returns.
func (c *Capture) Format() audio.Format { return c.format }

// FrameDuration returns the duration of each frame Read returns.
func (c *Capture) FrameDuration() time.Duration {
	return audio.FramesDuration(int64(len(c.frame)/c.format.Channels), c.format.SampleRate)
}

// Read returns the next frame of recorded audio, waiting for it if need
// be. The slice is reused by the next Read. Once the device has stopped on
// its own, Read returns the audio still buffered and then an error matching
// ErrDeviceStopped.
func (c *Capture) Read(ctx context.Context) ([]int16, error) {
	for {
		select {
		case <-c.done:
			return nil, audio.ErrSourceClosed
		default:
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.ring.read(c.frame) {
			return c.frame, nil
		}
		if c.stopped.Load() {
			// The callback may have written a last frame before stopping.
			if c.ring.read(c.frame) {
				return c.frame, nil
			}
			return nil, fmt.Errorf("audio: read microphone: %w", ErrDeviceStopped)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, audio.ErrSourceClosed
		case <-c.stoppedCh:
		case <-c.ring.notify:
		}
	}
}

// Overruns returns how many times audio was dropped because Read was not
// called often enough.
func (c *Capture) Overruns() int64 { return c.ring.overruns.Load() }

// Dropped returns how much audio was dropped in all.
func (c *Capture) Dropped() time.Duration {
	return audio.FramesDuration(c.ring.dropped.Load()/int64(c.format.Channels), c.format.SampleRate)
}

// Captured returns how much audio the device has delivered in all, read,
// waiting or dropped.
func (c *Capture) Captured() time.Duration {
	return audio.FramesDuration(c.ring.written()/int64(c.format.Channels), c.format.SampleRate)
}

// Close stops the device, waits for its thread to finish and releases the
// audio backend. A Read blocked in another goroutine returns
// audio.ErrSourceClosed at once. Close is idempotent.
func (c *Capture) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		if c.dev != nil {
			c.dev.Uninit() // stops the device; no callback runs after it returns
		}
		if c.mctx != nil {
			if err := c.mctx.Uninit(); err != nil {
				c.closeErr = fmt.Errorf("audio: close microphone: %w", err)
			}
			c.mctx.Free()
		}
	})
	return c.closeErr
}

// platformBackends are the backends tried when none are configured: every
// real backend of the platform, in miniaudio's order, and never the null
// backend, which would record silence without saying so.
func platformBackends() []malgo.Backend {
	switch runtime.GOOS {
	case "windows":
		return []malgo.Backend{malgo.BackendWasapi, malgo.BackendDsound, malgo.BackendWinmm}
	case "darwin", "ios":
		return []malgo.Backend{malgo.BackendCoreaudio}
	case "linux":
		return []malgo.Backend{malgo.BackendPulseaudio, malgo.BackendAlsa, malgo.BackendJack}
	case "android":
		return []malgo.Backend{malgo.BackendAaudio, malgo.BackendOpensl}
	case "freebsd", "netbsd", "openbsd", "dragonfly":
		return []malgo.Backend{malgo.BackendSndio, malgo.BackendAudio4, malgo.BackendOss}
	case "js":
		return []malgo.Backend{malgo.BackendWebaudio}
	}
	var all []malgo.Backend
	for b := malgo.Backend(malgo.BackendWasapi); b <= malgo.BackendWebaudio; b++ {
		all = append(all, b)
	}
	return all
}

func initContext(backends []malgo.Backend, log *backendLog) (*malgo.AllocatedContext, error) {
	if len(backends) == 0 {
		backends = platformBackends()
	}
	quietBackends()
	mctx, err := malgo.InitContext(backends, malgo.ContextConfig{}, log.record)
	if err != nil {
		return nil, classify(err, log)
	}
	return mctx, nil
}

func freeContext(mctx *malgo.AllocatedContext) {
	_ = mctx.Uninit() // nothing to do about a failure on the way out
	mctx.Free()
}

// deviceKind is what differs between microphones and speakers when
// opening and listing them: miniaudio's device type, the noun for messages
// and the plain-words errors.
type deviceKind struct {
	typ         malgo.DeviceType
	noun        string
	noDevice    error // nothing to open
	unavailable error // there, but busy or refusing
	denied      error // refused by a privacy setting
}

// microphone is the kind of device Capture opens.
var microphone = deviceKind{
	typ:         malgo.Capture,
	noun:        "microphone",
	noDevice:    ErrNoDevice,
	unavailable: ErrDeviceUnavailable,
	denied:      ErrPermissionDenied,
}

// systemSound is an output recorded in loopback mode (WASAPI): its
// device is found among the outputs.
var systemSound = deviceKind{
	typ:         malgo.Loopback,
	noun:        "output to record",
	noDevice:    ErrNoDevice,
	unavailable: ErrDeviceUnavailable,
	denied:      ErrPermissionDenied,
}

// parseConfiguredID parses a configured device ID; empty (the system's
// default device) is nil.
func parseConfiguredID(s string) (*malgo.DeviceID, error) {
	if s == "" {
		return nil, nil
	}
	id, err := ParseDeviceID(s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// initDevice starts miniaudio on backends and initializes a device of the
// kind with dcfg: the configured device id, called name in messages, or
// the system's default when id is nil. The device is not started. The
// backend's messages go to log until the caller detaches it.
func (k deviceKind) initDevice(backends []malgo.Backend, id *malgo.DeviceID, name string, dcfg malgo.DeviceConfig,
	callbacks malgo.DeviceCallbacks, log *backendLog) (*malgo.AllocatedContext, *malgo.Device, error) {
	mctx, err := initContext(backends, log)
	if err != nil {
		return nil, nil, err
	}
	if id != nil {
		if err := k.checkExists(mctx, *id, name, log); err != nil {
			freeContext(mctx)
			return nil, nil, err
		}
	}
	var pin runtime.Pinner
	if id != nil {
		// miniaudio copies the ID during InitDevice; pinning lets the
		// config that points to it cross into C.
		pin.Pin(id)
		if k.typ == malgo.Playback {
			dcfg.Playback.DeviceID = unsafe.Pointer(id)
		} else {
			dcfg.Capture.DeviceID = unsafe.Pointer(id)
		}
	}
	dev, err := malgo.InitDevice(mctx.Context, dcfg, callbacks)
	pin.Unpin()
	if err != nil {
		if id == nil && errors.Is(err, malgo.ErrFailedToOpenBackendDevice) && !k.hasDevices(mctx) {
			err = describe(k.noDevice, err, log) // nothing to open, rather than busy
		} else {
			err = k.classify(err, log)
		}
		freeContext(mctx)
		return nil, nil, err
	}
	return mctx, dev, nil
}

// start starts dev, a device of the kind, and checks that it runs. The
// caller releases the device on an error.
func (k deviceKind) start(dev *malgo.Device, log *backendLog) error {
	if err := dev.Start(); err != nil {
		return fmt.Errorf("audio: start %s: %w", k.noun, k.classify(err, log))
	}
	if !dev.IsStarted() {
		return fmt.Errorf("audio: start %s: %w: the device did not start", k.noun, k.unavailable)
	}
	return nil
}

func (k deviceKind) hasDevices(mctx *malgo.AllocatedContext) bool {
	infos, err := mctx.Devices(k.typ)
	return err == nil && len(realDevices(infos)) > 0
}

// checkExists reports the kind's no-device error for a configured device
// that is not connected, which miniaudio would report in backend-specific
// ways.
func (k deviceKind) checkExists(mctx *malgo.AllocatedContext, id malgo.DeviceID, name string, log *backendLog) error {
	infos, err := mctx.Devices(k.typ)
	if err != nil {
		return k.classify(err, log)
	}
	for i := range infos {
		if infos[i].ID == id {
			return nil
		}
	}
	return fmt.Errorf("%w: the %s %q is not connected", k.noDevice, k.noun, name)
}

// classify wraps a miniaudio error from opening a microphone in the
// matching plain-words error, with the backend's last message when there
// is one.
func classify(err error, log *backendLog) error { return microphone.classify(err, log) }

// classify wraps a miniaudio error in the kind's matching plain-words
// error, with the backend's last message when there is one.
func (k deviceKind) classify(err error, log *backendLog) error {
	var kind error
	switch {
	case errors.Is(err, malgo.ErrNoBackend), errors.Is(err, malgo.ErrFailedToInitBackend),
		errors.Is(err, malgo.ErrAPINotFound):
		kind = ErrNoAudioBackend
	case errors.Is(err, malgo.ErrNoDevice), errors.Is(err, malgo.ErrDoesNotExist):
		kind = k.noDevice
	case errors.Is(err, malgo.ErrAccessDenied):
		kind = k.denied
	case errors.Is(err, malgo.ErrBusy), errors.Is(err, malgo.ErrAlreadyInUse),
		errors.Is(err, malgo.ErrFailedToOpenBackendDevice), errors.Is(err, malgo.ErrFailedToStartBackendDevice),
		errors.Is(err, malgo.ErrShareModeNotSupported), errors.Is(err, malgo.ErrFormatNotSupported),
		errors.Is(err, malgo.ErrDeviceTypeNotSupported), errors.Is(err, malgo.ErrUnavailable):
		kind = k.unavailable
	}
	return describe(kind, err, log)
}

// describe wraps err in kind (if not nil) and adds the backend's last
// message.
func describe(kind, err error, log *backendLog) error {
	detail := ""
	if msg := log.last(); msg != "" {
		detail = " (" + msg + ")"
	}
	if kind == nil {
		return fmt.Errorf("%w%s", err, detail)
	}
	return fmt.Errorf("%w: %w%s", kind, err, detail)
}

// backendLog keeps the most telling message miniaudio logged while a
// device was being opened: its own errors are terse ("Failed to open
// backend device"), the backend's say why. miniaudio logs from whichever
// thread is working, hence the mutex; the log is detached before audio
// flows.
type backendLog struct {
	mu     sync.Mutex
	tagged string // last message naming its backend, like "[ALSA] ..."
	plain  string // last message of any kind
}

func (l *backendLog) record(msg string) {
	msg = strings.TrimSpace(msg)
	if msg == "" || strings.HasPrefix(msg, "Loading ") {
		return // library and symbol loading, logged at debug level
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.plain = msg
	if strings.HasPrefix(msg, "[") {
		l.tagged = msg
	}
}

func (l *backendLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tagged != "" {
		return l.tagged
	}
	return l.plain
}

// hexIDPrefix marks a device ID written in hexadecimal.
const hexIDPrefix = "hex:"

// encodeDeviceID turns miniaudio's device identifier (a C union: a string
// for most backends, UTF-16 for WASAPI, an integer for some) into a string
// for configuration files: the identifier itself when it is printable ASCII,
// its bytes in hexadecimal otherwise. ParseDeviceID inverts it.
func encodeDeviceID(id malgo.DeviceID) string {
	b := id[:]
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && printableASCII(b) && !strings.HasPrefix(string(b), hexIDPrefix) {
		return string(b)
	}
	if len(b) == 0 {
		b = id[:1]
	}
	return hexIDPrefix + hex.EncodeToString(b)
}

// ParseDeviceID turns a Device.ID, as stored in configuration, back into
// miniaudio's identifier. It fails on anything InputDevices could not have
// produced.
func ParseDeviceID(s string) (malgo.DeviceID, error) {
	var id malgo.DeviceID
	if rest, ok := strings.CutPrefix(s, hexIDPrefix); ok {
		b, err := hex.DecodeString(rest)
		if err != nil || len(b) == 0 || len(b) > len(id) {
			return id, fmt.Errorf("invalid device ID %q: want %q followed by 1 to %d bytes in hexadecimal", s, hexIDPrefix, len(id))
		}
		copy(id[:], b)
		return id, nil
	}
	if s == "" || len(s) > len(id) || !printableASCII([]byte(s)) {
		return id, fmt.Errorf("invalid device ID %q: want 1 to %d printable ASCII characters, or %q and hexadecimal", s, len(id), hexIDPrefix)
	}
	copy(id[:], s)
	return id, nil
}

func printableASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
