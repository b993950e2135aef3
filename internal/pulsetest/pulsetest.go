// Package pulsetest starts a real PulseAudio server for a test: on its
// own socket, with no hardware, a null sink (an output whose sound goes
// nowhere but to its monitor) and a null source. It is what a person's
// desktop has, minus the sound card.
package pulsetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earshot-app/earshot/internal/testkit"
)

// Sink and SinkDescription name the null sink: the meeting's sound plays
// into it, and its monitor records it.
const (
	Sink            = "earshot_meeting"
	SinkDescription = "Meeting Speakers"
	// Monitor is the ID of the sink's monitor source.
	Monitor = Sink + ".monitor"
	// Source is a null source, the server's default input (a microphone
	// that hears silence).
	Source = "earshot_mic"
)

// Start starts a server and points the process's PulseAudio clients at it
// (PULSE_SERVER); the server stops when the test ends. The test cannot be
// parallel (t.Setenv). Without the pulseaudio binary the test fails:
// scripts/setup installs it.
func Start(t *testing.T) {
	t.Helper()
	bin, err := exec.LookPath("pulseaudio")
	if err != nil {
		t.Fatalf("pulseaudio is not installed (scripts/setup installs it): %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "native")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"-n", // no default configuration: no hardware, no session bus
		"--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--log-target=stderr",
		"--load=module-null-sink sink_name="+Sink+` sink_properties="device.description='`+SinkDescription+`'"`,
		"--load=module-null-source source_name="+Source,
		// The socket last: it appears once the devices are there.
		"--load=module-native-protocol-unix socket="+sock+" auth-anonymous=1",
	)
	// Its own home and runtime folder: nothing of the machine's.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir, "XDG_CONFIG_HOME="+dir)
	var log testkit.Buffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start pulseaudio: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	// The server is up once its socket answers; a loaded machine may
	// take seconds to start it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("pulseaudio exited at start:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulseaudio did not start in 30 s:\n%s", log.String())
		}
	}
	t.Setenv("PULSE_SERVER", "unix:"+sock)
	// The sink and the source are the defaults, as a desktop's would be.
	t.Setenv("PULSE_SINK", Sink)
	t.Setenv("PULSE_SOURCE", Source)
	if pactl, err := exec.LookPath("pactl"); err == nil {
		for _, args := range [][]string{{"set-default-sink", Sink}, {"set-default-source", Source}} {
			if out, err := exec.Command(pactl, args...).CombinedOutput(); err != nil {
				t.Fatalf("pactl %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
	}
}
