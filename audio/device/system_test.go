package device

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/internal/pulsetest"
)

// TestSystemSoundFromPulseAudio: with a real PulseAudio server, the sound
// an output plays is offered as what it is ("Sound from ..."), not as a
// microphone, and recording it gives what was played.
func TestSystemSoundFromPulseAudio(t *testing.T) {
	pulsetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pulse := []malgo.Backend{malgo.BackendPulseaudio}

	sys, err := SystemDevices(ctx, pulse...)
	if err != nil {
		t.Fatal(err)
	}
	if len(sys) != 1 || sys[0].ID != pulsetest.Monitor || sys[0].Name != "Sound from "+pulsetest.SinkDescription || !sys[0].Default {
		t.Fatalf("SystemDevices = %+v", sys)
	}
	mics, err := InputDevices(ctx, pulse...)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mics {
		if m.ID == pulsetest.Monitor {
			t.Errorf("the monitor is listed as a microphone: %+v", mics)
		}
	}

	// A 440 Hz tone played on the output is recorded from its sound.
	rec, err := OpenCapture(ctx, CaptureConfig{Backends: pulse, DeviceID: sys[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	out, err := OpenPlayback(ctx, PlaybackConfig{Backends: pulse, DeviceID: pulsetest.Sink})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	tone := make([]int16, 16000) // one second
	for i := range tone {
		tone[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/16000))
	}
	played := make(chan error, 1)
	go func() {
		err := out.Write(ctx, tone)
		if err == nil {
			err = out.Drain(ctx)
		}
		played <- err
	}()
	// The recording hears the tone within the time it plays, and the
	// servers' buffers (a second and more on a loaded machine).
	loudest := 0.0
	for read := 0; read < 16000*5 && loudest < 2000; {
		pcm, err := rec.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		read += len(pcm)
		var sum float64
		for _, v := range pcm {
			sum += float64(v) * float64(v)
		}
		loudest = max(loudest, math.Sqrt(sum/float64(len(pcm))))
	}
	if err := <-played; err != nil {
		t.Fatal(err)
	}
	// 8000 peak is 5657 RMS; the server's resampling keeps it near.
	if loudest < 2000 {
		t.Errorf("the recording of the output's sound peaked at RMS %.0f, want the tone's (about 5657)", loudest)
	}
}

// TestSameNamedDevicesNamedApart: two outputs of the same name (as two
// PulseAudio null sinks are) are listed under names people can tell
// apart, and so is the sound of each.
func TestSameNamedDevicesNamedApart(t *testing.T) {
	pulsetest.Start(t)
	const other = "earshot_other"
	out, err := exec.Command("pactl", "load-module", "module-null-sink", "sink_name="+other,
		`sink_properties="device.description='`+pulsetest.SinkDescription+`'"`).CombinedOutput()
	if err != nil {
		t.Fatalf("pactl load-module: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pulse := []malgo.Backend{malgo.BackendPulseaudio}
	outs, err := OutputDevices(ctx, pulse...)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := SystemDevices(ctx, pulse...)
	if err != nil {
		t.Fatal(err)
	}
	for what, devs := range map[string][]Device{"outputs": outs, "sounds": sys} {
		names := map[string]string{}
		for _, d := range devs {
			if id, ok := names[d.Name]; ok {
				t.Errorf("%s: %s and %s are both %q", what, id, d.ID, d.Name)
			}
			names[d.Name] = d.ID
		}
		if len(devs) != 2 {
			t.Errorf("%s: %+v, want the two sinks'", what, devs)
		}
	}
	want := map[string]string{pulsetest.Sink: pulsetest.SinkDescription + " (" + pulsetest.Sink + ")", other: pulsetest.SinkDescription + " (" + other + ")"}
	for _, d := range outs {
		if d.Name != want[d.ID] {
			t.Errorf("output %s is named %q, want %q", d.ID, d.Name, want[d.ID])
		}
	}
	for _, d := range sys {
		if w := "Sound from " + want[strings.TrimSuffix(d.ID, ".monitor")]; d.Name != w {
			t.Errorf("sound %s is named %q, want %q", d.ID, d.Name, w)
		}
	}
}
