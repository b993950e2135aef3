package sessions_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/clock"
	"github.com/earshot-app/earshot/sessions"
)

// zeroDevice gives 20 ms frames of zeros as fast as they are read, as
// ALSA's null plugin does.
type zeroDevice struct{}

func (zeroDevice) Format() audio.Format {
	return audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
}
func (zeroDevice) Read(context.Context) ([]int16, error) { return make([]int16, 320), nil }
func (zeroDevice) Close() error                          { return nil }

// TestRealTimeRefusesAFastDevice: a device that runs ahead of the clock
// is refused within the slack, not recorded for hours; one that keeps
// pace with the clock (a real microphone, even a muted one) goes on.
func TestRealTimeRefusesAFastDevice(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewFake(time.Unix(1000, 0))
	fast := sessions.RealTime(zeroDevice{}, clk)
	var frames int
	var err error
	for frames = 0; frames < 10000; frames++ {
		if _, err = fast.Read(ctx); err != nil {
			break
		}
	}
	if !errors.Is(err, sessions.ErrNotRealTime) || frames > 101 {
		t.Fatalf("after %d frames (%v of audio, no time passed): %v, want ErrNotRealTime by 2 s", frames, time.Duration(frames)*20*time.Millisecond, err)
	}

	paced := sessions.RealTime(zeroDevice{}, clk)
	for i := range 5000 { // 100 s of audio, read as it is recorded
		clk.Advance(20 * time.Millisecond)
		if _, err := paced.Read(ctx); err != nil {
			t.Fatalf("frame %d of a device in real time: %v", i, err)
		}
	}
}
