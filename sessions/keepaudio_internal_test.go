package sessions

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// nullAudioHistory takes audio and keeps nothing: the keeper's own tests
// read its bytes directly.
type nullAudioHistory struct{}

func (nullAudioHistory) SaveAudio(context.Context, int64, store.Audio) error { return nil }

// savedAudio keeps the audio saved, for the keeper's tests.
type savedAudio struct{ data []byte }

func (s *savedAudio) SaveAudio(_ context.Context, _ int64, a store.Audio) error {
	s.data = a.Data
	return nil
}

// tone returns n frames of a sine of freq Hz at 16 kHz, with channels
// channels, the ones not in on silent.
func tone(n, channels int, freq float64, on ...int) []int16 {
	out := make([]int16, n*channels)
	for i := range n {
		v := int16(8000 * math.Sin(2*math.Pi*freq*float64(i)/streamRate))
		for _, c := range on {
			out[i*channels+c] = v
		}
	}
	return out
}

// levelOf is the level of one channel of interleaved samples, 0 to 1.
func levelOf(s []float32, channels, ch, from, to int) float64 {
	var sum float64
	n := 0
	for i := from; i < to; i++ {
		v := float64(s[i*channels+ch])
		sum += v * v
		n++
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// TestKeptAudioRoundTrip: what is kept decodes (with audio's own Ogg
// Opus decoder) to exactly as many frames as were taken, each channel
// where it was, silence where it was silent.
func TestKeptAudioRoundTrip(t *testing.T) {
	for _, channels := range []int{1, 2} {
		k, err := newKeptAudio(true, nullAudioHistory{}, channels, nil)
		if err != nil || k == nil {
			t.Fatalf("newKeptAudio(%d channels) = %v, %v", channels, k, err)
		}
		// 1.2345 s of tone on channel 0 only, then 0.5 s muted (taken as
		// silence although it was loud), then 0.7003 s of tone again:
		// lengths that are no multiple of a packet.
		first, muted, last := 19752, 8000, 11205
		k.add(tone(first, channels, 440, 0), false)
		k.add(tone(muted, channels, 440, 0), true)
		k.add(tone(last, channels, 300, 0), false)
		data, err := k.bytes()
		if err != nil {
			t.Fatal(err)
		}
		b, err := audio.Decode(t.Context(), bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%d channels: decode: %v", channels, err)
		}
		if b.SampleRate != 48000 || b.Channels != channels {
			t.Fatalf("decoded %d Hz, %d channels; want 48000 Hz, %d", b.SampleRate, b.Channels, channels)
		}
		total := first + muted + last
		if got, want := b.Frames(), total*keptScale; got != want {
			t.Errorf("%d channels: %d frames decoded, want exactly %d (%d at 16 kHz)", channels, got, want, total)
		}
		at := func(s int) int { return s * keptScale }
		const margin = 960 // 20 ms each side of a change
		if r := levelOf(b.Samples, channels, 0, at(0)+margin, at(first)-margin); r < 0.15 {
			t.Errorf("%d channels: the first tone decodes at level %.3f", channels, r)
		}
		if r := levelOf(b.Samples, channels, 0, at(first)+margin, at(first+muted)-margin); r > 0.01 {
			t.Errorf("%d channels: the muted stretch decodes at level %.3f, want silence", channels, r)
		}
		if r := levelOf(b.Samples, channels, 0, at(first+muted)+margin, at(total)-margin); r < 0.15 {
			t.Errorf("%d channels: the last tone decodes at level %.3f", channels, r)
		}
		if channels == 2 {
			// A meeting's sides stay apart: the silent channel stays
			// quiet next to the loud one.
			if r := levelOf(b.Samples, 2, 1, 0, b.Frames()); r > 0.02 {
				t.Errorf("the silent channel decodes at level %.3f beside a tone", r)
			}
		}
	}
}

// TestKeptAudioLimit: past the limit, the first part is kept, whole and
// playable, and nothing after it.
func TestKeptAudioLimit(t *testing.T) {
	k, err := newKeptAudio(true, nullAudioHistory{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	k.limit = 20 << 10 // some 6 s at 24 kb/s
	noise := make([]int16, streamRate)
	for i := range noise {
		noise[i] = int16((i*7919)%20000 - 10000)
	}
	for range 30 {
		k.add(noise, false)
	}
	if !k.full {
		t.Fatal("30 s at 24 kb/s did not reach a 20 kB limit")
	}
	kept := k.frames
	data, err := k.bytes()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > k.limit+keptLimitReserve {
		t.Errorf("%d bytes kept, past the limit and its reserve", len(data))
	}
	b, err := audio.Decode(t.Context(), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(b.Frames()); got != kept*keptScale || kept >= 30*streamRate || kept < 3*streamRate {
		t.Errorf("decoded %d frames of %d kept (of %d taken)", got/keptScale, kept, 30*streamRate)
	}
}

// TestKeptAudioOff: without the setting, or a history that keeps audio,
// nothing is encoded.
func TestKeptAudioOff(t *testing.T) {
	if k, err := newKeptAudio(false, nullAudioHistory{}, 1, nil); k != nil || err != nil {
		t.Errorf("KeepAudio off: keeper %v, %v", k, err)
	}
	if k, err := newKeptAudio(true, struct{}{}, 1, nil); k != nil || err != nil {
		t.Errorf("a history without SaveAudio: keeper %v, %v", k, err)
	}
	var k *keptAudio
	k.add([]int16{1, 2, 3}, false) // a nil keeper takes nothing, and does not fail
	k.save(nil)
}

// TestKeptAudioSpooled: kept audio goes to a file on the disk as it is
// encoded, not into memory, so that a session of hours holds none of it
// (it held the whole stream, 11 MB an hour, in a buffer that doubled as
// it grew). The file has no name: nothing is left in the cache folder,
// even while it is written. It is read back whole to be saved, and let
// go once saved. Where no file can be made, the audio is kept in memory.
func TestKeptAudioSpooled(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	k, err := newKeptAudio(true, nullAudioHistory{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	noise := make([]int16, streamRate)
	for i := range noise {
		noise[i] = int16((i*7919)%20000 - 10000)
	}
	for range 20 {
		k.add(noise, false)
	}
	if k.out.f == nil || k.out.mem.Len() != 0 {
		t.Fatalf("the kept audio is in memory (%d bytes), not on the disk", k.out.mem.Len())
	}
	info, err := k.out.f.Stat()
	if err != nil || info.Size() == 0 || info.Size() != k.out.n {
		t.Fatalf("the spool holds %v bytes (%v), want the %d written", info.Size(), err, k.out.n)
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("the cache folder holds %v while the audio is kept", left)
	}
	h := &savedAudio{}
	k.h = h
	k.save(&record{log: slog.New(slog.DiscardHandler)})
	b, err := audio.Decode(t.Context(), bytes.NewReader(h.data))
	if err != nil || b.Frames() != 20*streamRate*keptScale {
		t.Fatalf("saved %d bytes: %v, %v", len(h.data), b, err)
	}
	if _, err := k.out.f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("after saving, the spool is still open (%v)", err)
	}

	t.Setenv("XDG_CACHE_HOME", filepath.Join(cache, "missing"))
	t.Setenv("TMPDIR", filepath.Join(cache, "missing too"))
	m, err := newKeptAudio(true, nullAudioHistory{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	m.add(noise, false)
	if m.out.f != nil || m.out.mem.Len() == 0 {
		t.Errorf("with nowhere to write, the audio is not kept in memory")
	}
	if data, err := m.bytes(); err != nil || len(data) == 0 {
		t.Errorf("kept in memory: %d bytes, %v", len(data), err)
	}
}
