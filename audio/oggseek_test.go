package audio

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
)

// speechFrom decodes what SpeechFrom gives for at, in chunks.
func speechFrom(t *testing.T, x *OggOpusIndex, at time.Duration) []int16 {
	t.Helper()
	d, rest, err := x.SpeechFrom(at)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []int16
	for len(rest) > 0 {
		n := min(len(rest), 5000)
		pcm, err := d.Decode(rest[:n])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pcm...)
		rest = rest[n:]
	}
	pcm, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, pcm...)
}

// TestOggOpusIndex plays kept audio (16 kHz Ogg Opus as the sessions keep
// it) from points across it: each gives what decoding the whole stream
// gives from that point, to the end, without decoding what comes before.
func TestOggOpusIndex(t *testing.T) {
	speech := speechAt(t, 7, 16000)
	var pcm []int16
	for range 3 {
		pcm = append(pcm, speech...)
	}
	var ogg bytes.Buffer
	w, err := NewOggOpusWriter(&ogg, 16000, 1, 24000)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(pcm); i += 1600 {
		if err := w.Write(pcm[i:min(i+1600, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := IndexOggOpus(ogg.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	all := speechFrom(t, x, 0)
	if len(all) != len(pcm) || x.Duration() != FramesDuration(int64(len(pcm)), 16000) {
		t.Fatalf("whole: %d samples, duration %v; the audio had %d", len(all), x.Duration(), len(pcm))
	}
	for _, at := range []time.Duration{30 * time.Millisecond, 900 * time.Millisecond, 3333 * time.Millisecond, 10 * time.Second, 20*time.Second + 900*time.Millisecond, time.Minute} {
		got := speechFrom(t, x, at)
		first := min(int(int64(at)*16000/int64(time.Second)), len(all))
		want := all[first:]
		if d := len(got) - len(want); d < -1 || d > 1 {
			t.Errorf("from %v: %d samples, want %d", at, len(got), len(want))
			continue
		}
		n := min(len(got), len(want))
		if n == 0 {
			continue
		}
		var sig, noise float64
		for i := range n {
			s, e := float64(want[i]), float64(got[i])-float64(want[i])
			sig += s * s
			noise += e * e
		}
		snr := 10 * math.Log10(sig/max(noise, 1))
		t.Logf("from %v: %d samples, SNR %.1f dB", at, len(got), snr)
		if snr < 20 {
			t.Errorf("from %v: SNR %.1f dB against the whole stream's decoding", at, snr)
		}
	}
	if _, err := IndexOggOpus(readTestdata(t, "speech.ogg")); !errors.Is(err, ErrUndecodable) {
		t.Errorf("Ogg Vorbis: %v, want it refused", err)
	}
	if _, err := IndexOggOpus(ogg.Bytes()[:len(ogg.Bytes())-10]); !errors.Is(err, ErrUndecodable) {
		t.Errorf("a cut stream: %v, want it refused", err)
	}
}

func FuzzIndexOggOpus(f *testing.F) {
	seedFiles(f, func(b []byte) {
		if hasPrefix(b, "OggS") {
			f.Add(b, uint16(100))
		}
	})
	f.Fuzz(func(t *testing.T, b []byte, ms uint16) {
		x, err := IndexOggOpus(fixOggCRC(b))
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		d, rest, err := x.SpeechFrom(time.Duration(ms) * time.Millisecond)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		defer d.Close()
		if _, err := d.Decode(rest); err != nil {
			checkDecodeError(t, err)
		}
	})
}
