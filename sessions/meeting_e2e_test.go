package sessions_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/pulsetest"
	"github.com/earshot-app/earshot/internal/testkit"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestCaptionsOfTheComputersSound (must show): a real PulseAudio server
// with a null sink, as a desktop has minus the sound card; a real
// recording played into the sink is captioned from the sink's sound
// through the app's own capture code and the local engine, about as well
// as the same recording transcribed as a file.
func TestCaptionsOfTheComputersSound(t *testing.T) {
	pulsetest.Start(t) // not parallel: it points the process's sound at the server
	ctx := testContext(t, 3*time.Minute)
	eng := localEngine(t)
	db := openDB(t)
	ws, err := sessions.NewWorkspace(sessions.WorkspaceConfig{
		History: db, Keys: sessions.NewKeys(&store.Memory{}, nil),
		Microphones: sessions.DeviceMicrophones{},
		Local:       func() (api.Endpoint, api.Secret, error) { return eng.Endpoint(), eng.Key, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	sys, err := ws.SystemSources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sys) != 1 || sys[0].Name != "Sound from "+pulsetest.SinkDescription {
		t.Fatalf("the computer's sound is offered as %+v", sys)
	}

	const id = "0920"
	want := truth(t)[id]
	file, err := ws.TranscribeFile(ctx, librivoxPath(id), nil)
	if err != nil {
		t.Fatal(err)
	}
	direct := testkit.WordErrorRate(want, file.Response.Results.Channels[0].Alternatives[0].Transcript)

	c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Capture: sessions.CaptureSystem})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if c.SourceName() != "Sound from "+pulsetest.SinkDescription {
		t.Errorf("the session hears %q", c.SourceName())
	}
	events := c.Events()
	var finals []string
	waitEvent := func(what string, match func(sessions.Event) bool) {
		t.Helper()
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("the session ended before %s", what)
				}
				if f, ok := ev.(*sessions.FinalEvent); ok {
					finals = append(finals, f.Caption.Text)
				}
				if match(ev) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s: %v", what, ctx.Err())
			}
		}
	}
	waitEvent("the live state", func(ev sessions.Event) bool {
		st, ok := ev.(*sessions.StateEvent)
		return ok && st.State == sessions.StateLive
	})

	// The recording plays on the meeting's speakers, in real time, from
	// another program, as a meeting's sound does.
	paplay, err := exec.LookPath("paplay")
	if err != nil {
		t.Fatalf("paplay is not installed (scripts/setup installs pulseaudio-utils): %v", err)
	}
	played := make(chan error, 1)
	go func() {
		out, err := exec.CommandContext(ctx, paplay, "--device="+pulsetest.Sink, librivoxPath(id)).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("paplay: %w: %s", err, out)
		}
		played <- err
	}()
	waitEvent("the recording's sound", func(ev sessions.Event) bool {
		l, ok := ev.(*sessions.LevelEvent)
		return ok && l.RMS > -40 // dBFS: the recording, not the silence before it
	})
	if err := <-played; err != nil {
		t.Fatal(err)
	}
	// The server's buffers still hold the end of the recording: two
	// seconds more of its sound (counted in the session's level reports,
	// every 50 ms) lets it all arrive before the session stops.
	levels := 0
	waitEvent("the tail of the sound", func(ev sessions.Event) bool {
		_, ok := ev.(*sessions.LevelEvent)
		if ok {
			levels++
		}
		return levels >= 40
	})
	stopped := make(chan error, 1)
	go func() { stopped <- c.Stop() }()
	for ev := range events {
		if f, ok := ev.(*sessions.FinalEvent); ok {
			finals = append(finals, f.Caption.Text)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	live := testkit.WordErrorRate(want, strings.Join(finals, " "))
	t.Logf("word error rate: %.2f from the computer's sound, %.2f from the file\nheard: %s\nwant:  %s", live, direct, strings.Join(finals, " "), want)
	if live > direct+0.05 {
		t.Errorf("captions of the computer's sound have a word error rate of %.2f, the file %.2f: more than 5 points worse", live, direct)
	}
}
