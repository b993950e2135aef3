package sessions

import (
	"context"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
)

// DeviceMicrophones are the machine's input devices, through miniaudio.
type DeviceMicrophones struct{}

// Devices lists the input devices.
func (DeviceMicrophones) Devices(ctx context.Context) ([]device.Device, error) {
	return device.InputDevices(ctx)
}

// Open starts capturing from the device with id ("" for the default) at
// the rate the stream uses, so no resampling is needed on the way.
func (DeviceMicrophones) Open(ctx context.Context, id string) (audio.Source, error) {
	return device.OpenCapture(ctx, device.CaptureConfig{DeviceID: id, SampleRate: streamRate, Channels: 1})
}
