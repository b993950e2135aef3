package tts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestVoiceLibrariesLoadOnFirstUse: a process that has made a Synthesizer
// but not spoken has loaded no flite voice library; speaking with one
// voice loads that voice's library and no other. It runs in a fresh
// process (this test binary again), since other tests load voices.
func TestVoiceLibrariesLoadOnFirstUse(t *testing.T) {
	if os.Getenv("EARSHOT_TTS_LAZY_CHILD") == "1" {
		lazyVoiceChild(t)
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestVoiceLibrariesLoadOnFirstUse$", "-test.v")
	cmd.Env = append(os.Environ(), "EARSHOT_TTS_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestVoiceLibrariesLoadOnFirstUse") {
		t.Fatalf("child did not run the check:\n%s", out)
	}
}

func lazyVoiceChild(t *testing.T) {
	loaded := func() []string {
		maps, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		var libs []string
		for line := range strings.Lines(string(maps)) {
			if i := strings.Index(line, "libflite_cmu_us_"); i >= 0 {
				name := strings.TrimSpace(line[i:])
				if len(libs) == 0 || libs[len(libs)-1] != name {
					libs = append(libs, name)
				}
			}
		}
		return libs
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if libs := loaded(); len(libs) > 0 {
		t.Fatalf("voice libraries loaded before anything was spoken: %v", libs)
	}
	v := mustVoice(t, DefaultVoice)
	if v.backend != flite {
		t.Fatalf("%s is not a flite voice", v.Name)
	}
	if err := s.Synthesize(context.Background(), v, "Hello.", Params{}, func(Chunk) error { return nil }); err != nil {
		t.Fatal(err)
	}
	libs := loaded()
	if len(libs) != 1 || !strings.HasPrefix(libs[0], "libflite_"+v.id+".so") {
		t.Fatalf("after speaking with %s (%s), loaded %v, want that voice's library only", v.Name, v.id, libs)
	}
}

// TestMissingVoiceLibrary: a voice whose library cannot be opened is an
// initialisation error that names the library, not a crash.
func TestMissingVoiceLibrary(t *testing.T) {
	if err := fliteInit(); err != nil {
		t.Fatal(err)
	}
	err := fliteSynth("cmu_us_nobody", "Hello.", 1, 1, 1, sinkFunc(func([]int16, int, []fliteWord) bool { return true }))
	if !errors.Is(err, ErrInit) || !strings.Contains(err.Error(), "libflite_cmu_us_nobody.so.1") {
		t.Fatalf("err %v, want ErrInit naming the library", err)
	}
}
