package sessions

import (
	"context"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio/device"
)

// Speakers lists and opens output devices; main gives the real ones
// (DeviceSpeakers), tests give fakes or the null backend.
type Speakers interface {
	Devices(ctx context.Context) ([]device.Device, error)
	// Open opens the device with id ("" for the system's default) to
	// play 16-bit mono audio at rate Hz.
	Open(ctx context.Context, id string, rate int) (Player, error)
}

// Player plays 16-bit mono audio as it is written, with a small jitter
// buffer; *device.Playback implements it. Its methods must be safe for
// concurrent use.
type Player interface {
	// Write queues samples; the first Write after the previous stream
	// ended begins a new stream.
	Write(ctx context.Context, pcm []int16) error
	// End marks the stream complete, so that a short tail plays.
	End()
	// Drain ends the stream and waits until it has been played.
	Drain(ctx context.Context) error
	// Stop discards what is queued and silences the output at once.
	Stop()
	// Played is the playhead of the current stream.
	Played() time.Duration
	// Queued is the audio waiting to be played.
	Queued() time.Duration
	// FirstWrite and Started are when the stream's first audio was
	// written and when the device first took it; zero until then.
	FirstWrite() time.Time
	Started() time.Time
	Close() error
}

// DeviceSpeakers are the machine's output devices, through miniaudio.
type DeviceSpeakers struct {
	// Backends are the audio backends to try; nil means the platform's
	// own. Tests name device.NullBackend, which plays into nothing in
	// real time.
	Backends []malgo.Backend
}

// Devices lists the output devices.
func (s DeviceSpeakers) Devices(ctx context.Context) ([]device.Device, error) {
	return device.OutputDevices(ctx, s.Backends...)
}

// Open opens the output device with id ("" for the default) at rate.
func (s DeviceSpeakers) Open(ctx context.Context, id string, rate int) (Player, error) {
	p, err := device.OpenPlayback(ctx, device.PlaybackConfig{Backends: s.Backends, DeviceID: id, SampleRate: rate, Channels: 1})
	if err != nil {
		return nil, err
	}
	return p, nil
}
