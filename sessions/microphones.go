package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/clock"
)

// DeviceMicrophones are the machine's input devices, through miniaudio.
type DeviceMicrophones struct{}

// Devices lists the input devices.
func (DeviceMicrophones) Devices(ctx context.Context) ([]device.Device, error) {
	return device.InputDevices(ctx)
}

// SystemDevices lists the sources of the sound the computer plays.
func (DeviceMicrophones) SystemDevices(ctx context.Context) ([]device.Device, error) {
	return device.SystemDevices(ctx)
}

// Open starts capturing from the device with id ("" for the default) at
// the rate the stream uses, so no resampling is needed on the way. A
// device that turns out to deliver audio faster than real time is
// refused once it does (see RealTime).
func (DeviceMicrophones) Open(ctx context.Context, id string) (audio.Source, error) {
	c, err := device.OpenCapture(ctx, device.CaptureConfig{DeviceID: id, SampleRate: streamRate, Channels: 1})
	if err != nil {
		return nil, err
	}
	return RealTime(c, nil), nil
}

// ErrNotRealTime matches a capture device that delivers audio faster
// than time passes: no microphone does (ALSA's null plugin, for one,
// gives zeros as fast as they are read, hours of "audio" a minute).
var ErrNotRealTime = errors.New("the device delivers audio faster than real time, so it is not a microphone")

// realTimeSlack is how far ahead of the clock a device may run: what its
// own buffer may hand over at once when it starts, and jitter.
const realTimeSlack = 2 * time.Second

// RealTime wraps a capture device's source so that it can never run
// ahead of clk (nil for the real clock) by more than realTimeSlack: once
// it does, Read fails with ErrNotRealTime, and the session ends saying
// so, instead of recording hours of audio that never were. A device that
// delivers real silence (zeros, in real time) is a muted microphone and
// goes on.
// RealTime is to wrap a device as soon as it is opened: what it has
// recorded since then is what it may deliver.
func RealTime(src audio.Source, clk Clock) audio.Source {
	c := clock.Or(clk)
	return &realTimeSource{Source: src, clock: c, started: c.Now()}
}

type realTimeSource struct {
	audio.Source
	clock   Clock
	started time.Time
	frames  int64 // sample frames delivered
}

func (s *realTimeSource) Read(ctx context.Context) ([]int16, error) {
	frame, err := s.Source.Read(ctx)
	if err != nil {
		return frame, err
	}
	now := s.clock.Now()
	f := s.Format()
	s.frames += int64(len(frame) / max(f.Channels, 1))
	got := audio.FramesDuration(s.frames, f.SampleRate)
	if elapsed := now.Sub(s.started); got > elapsed+realTimeSlack {
		return nil, fmt.Errorf("%w: %v of audio in %v", ErrNotRealTime, got.Round(time.Millisecond), elapsed.Round(time.Millisecond))
	}
	return frame, nil
}
