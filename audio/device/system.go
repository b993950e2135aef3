package device

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/gen2brain/malgo"
)

// System audio: the sound the computer plays, which in a meeting is the
// other people. Each platform offers it its own way:
//
//   - PulseAudio, and PipeWire through its PulseAudio server, give every
//     output a monitor source, listed with the inputs ("Monitor of
//     Built-in Audio", its ID the output's name and ".monitor");
//   - Windows (WASAPI) records any output in loopback mode;
//   - macOS has no such thing: a loopback driver (BlackHole, Soundflower,
//     Loopback) installed as an output and listed as an input is the way.
//
// SystemDevices lists them, named as what they are ("Sound from
// Built-in Audio"); OpenCapture opens their IDs like a microphone's.

// ErrNoSystemAudio matches when the system's sound cannot be recorded here.
var ErrNoSystemAudio = errors.New("the sound the computer plays cannot be recorded here")

// loopbackPrefix starts the ID of a WASAPI output recorded in loopback
// mode: the output's own ID follows.
const loopbackPrefix = "loopback:"

// loopbackDrivers are the names of macOS loopback drivers, as they list
// themselves.
var loopbackDrivers = []string{"BlackHole", "Soundflower", "Loopback Audio"}

// SystemDevices lists the sources of the sound the computer plays, on the
// first backend that starts (see InputDevices). The one of the output in
// use is marked Default. When there is none, the error matches
// ErrNoSystemAudio and says in plain words what would give one.
func SystemDevices(ctx context.Context, backends ...malgo.Backend) ([]Device, error) {
	if len(backends) == 0 {
		backends = platformBackends()
	}
	if runtime.GOOS == "windows" && backends[0] == malgo.BackendWasapi {
		outs, err := listDevices(ctx, speaker, backends)
		if err != nil {
			return nil, err
		}
		devs := make([]Device, 0, len(outs))
		for _, o := range outs {
			devs = append(devs, Device{ID: loopbackPrefix + o.ID, Name: "Sound from " + o.Name, Default: o.Default})
		}
		return distinctNames(devs), nil
	}
	ins, err := listAllInputs(ctx, backends)
	if err != nil {
		return nil, err
	}
	var devs []Device
	if runtime.GOOS == "darwin" {
		for _, d := range ins {
			if isLoopbackDriver(d) {
				devs = append(devs, Device{ID: d.ID, Name: "Sound through " + d.Name})
			}
		}
		if len(devs) == 0 {
			return nil, fmt.Errorf("%w: macOS lets no app record the sound it plays; install a loopback driver such as BlackHole, and send the sound to it (with a Multi-Output Device in Audio MIDI Setup, so that you still hear it)", ErrNoSystemAudio)
		}
		return distinctNames(devs), nil
	}
	// The monitor of the output in use is the default: what a person
	// hears.
	outs, _ := listDevices(ctx, speaker, backends)
	defaultOut := ""
	for _, o := range outs {
		if o.Default {
			defaultOut = o.ID
		}
	}
	for _, d := range ins {
		if isMonitor(d) {
			devs = append(devs, Device{ID: d.ID, Name: "Sound from " + strings.TrimPrefix(d.Name, "Monitor of "),
				Default: defaultOut != "" && d.ID == defaultOut+".monitor"})
		}
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("%w: recording the computer's sound needs PulseAudio or PipeWire (with its PulseAudio server), which offer every output's sound as a source; none was found", ErrNoSystemAudio)
	}
	return distinctNames(devs), nil
}

// listAllInputs lists the inputs, monitors of outputs included.
func listAllInputs(ctx context.Context, backends []malgo.Backend) ([]Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var log backendLog
	mctx, err := initContext(backends, &log)
	if err != nil {
		return nil, fmt.Errorf("audio: list sources: %w", err)
	}
	defer freeContext(mctx)
	infos, err := mctx.Devices(malgo.Capture)
	if err != nil {
		return nil, fmt.Errorf("audio: list sources: %w", microphone.classify(err, &log))
	}
	return realDevices(infos), nil
}

// isMonitor reports whether d is the monitor of an output: the sound it
// plays, not a microphone.
func isMonitor(d Device) bool {
	return strings.HasSuffix(d.ID, ".monitor") || strings.HasPrefix(d.Name, "Monitor of ")
}

// isLoopbackDriver reports whether d is a macOS loopback driver's input.
func isLoopbackDriver(d Device) bool {
	for _, n := range loopbackDrivers {
		if strings.Contains(d.Name, n) {
			return true
		}
	}
	return false
}

// loopbackID reports the output ID of a loopback source's ID.
func loopbackID(id string) (string, bool) {
	return strings.CutPrefix(id, loopbackPrefix)
}
