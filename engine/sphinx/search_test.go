package sphinx

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSearchArgs(t *testing.T) {
	if a := (Search{}).args(); len(a) != 0 {
		t.Errorf("the zero search gives %q, want the library's defaults (no arguments)", a)
	}
	got := FastSearch().args()
	want := []string{"-maxhmmpf", "5000", "-fwdflat", "no", "-bestpath", "no"}
	if !slices.Equal(got, want) {
		t.Errorf("fast search args %q, want %q", got, want)
	}
	if a := (Search{Beam: 1e-40, WordBeam: 1e-28, PhoneBeam: 1e-30}).args(); !slices.Equal(a, []string{"-beam", "1e-40", "-wbeam", "1e-28", "-pbeam", "1e-30"}) {
		t.Errorf("beams give %q", a)
	}
	for _, bad := range []Search{{Beam: -1}, {WordBeam: 1}, {PhoneBeam: 2}, {MaxHMMsPerFrame: -3}} {
		cfg := Config{Search: bad}.withDefaults()
		if err := cfg.validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("search %+v: error %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// TestFastSearch decodes the five LibriVox clips with the library's search
// and with FastSearch: the fast one must use clearly less CPU, hear
// something else and not be far worse.
func TestFastSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes five recordings twice")
	}
	ctx := context.Background()
	fast, err := NewDecoder(ctx, Config{Search: FastSearch()})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	full := sharedDecoder(t)
	var clips [][]int16
	audio := 0.0
	for _, id := range clipIDs {
		c := readClip(t, clipPath(id))
		clips = append(clips, c)
		audio += float64(len(c)) / SampleRate
	}
	refs := references(t)
	run := func(d *Decoder) (cpu time.Duration, wer float64, hyps []string) {
		errs, n := 0, 0
		c0 := cpuTime()
		for i, c := range clips {
			rs, err := d.Transcribe(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			h := strings.Join(texts(rs), " ")
			hyps = append(hyps, h)
			errs += wordErrors(refs[clipIDs[i]], strings.Fields(h))
			n += len(refs[clipIDs[i]])
		}
		return cpuTime() - c0, float64(errs) / float64(n), hyps
	}
	// Alternate, keeping each one's best time, so that both see the same
	// load on a shared machine.
	var fullCPU, fastCPU time.Duration
	var fullWER, fastWER float64
	var fullHyps, fastHyps []string
	for i := range 2 {
		c, w, h := run(full)
		if i == 0 || c < fullCPU {
			fullCPU = c
		}
		fullWER, fullHyps = w, h
		c, w, h = run(fast)
		if i == 0 || c < fastCPU {
			fastCPU = c
		}
		fastWER, fastHyps = w, h
	}
	t.Logf("%.1f s of audio: library search cpu-xRT %.3f WER %.1f%%; fast search cpu-xRT %.3f WER %.1f%%",
		audio, fullCPU.Seconds()/audio, 100*fullWER, fastCPU.Seconds()/audio, 100*fastWER)
	for i := range clipIDs {
		t.Logf("%s\n  library: %s\n  fast:    %s", clipIDs[i], fullHyps[i], fastHyps[i])
	}
	if slices.Equal(fullHyps, fastHyps) {
		t.Error("the fast search heard exactly what the library's did: the two are not different models")
	}
	// CPU time, not wall time, so that other processes do not count; the
	// margin is wide because the measured ratio is about two thirds.
	if fastCPU > fullCPU*9/10 {
		t.Errorf("fast search took %v of CPU, the library's %v: not faster", fastCPU, fullCPU)
	}
	if fastWER > fullWER+0.1 {
		t.Errorf("fast search WER %.1f%%, the library's %.1f%%: far worse", 100*fastWER, 100*fullWER)
	}
}
