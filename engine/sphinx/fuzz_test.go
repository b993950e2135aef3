package sphinx

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzStream feeds arbitrary audio, in arbitrary chunks and with arbitrary
// Finalize calls, to the decoder. Audio from a client is outside input: the
// library must neither crash nor produce malformed results on it.
func FuzzStream(f *testing.F) {
	clip := readClip(f, clipPath("0880"))
	pcm := func(s []int16) []byte {
		b := make([]byte, 2*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
		return b
	}
	square := make([]int16, SampleRate/2)
	for i := range square {
		square[i] = math.MaxInt16
		if i/40%2 == 0 {
			square[i] = math.MinInt16
		}
	}
	f.Add(pcm(clip[:SampleRate]), uint16(1000), uint8(0))
	f.Add(pcm(clip[SampleRate:2*SampleRate]), uint16(7), uint8(3))
	f.Add(make([]byte, 2*SampleRate), uint16(4096), uint8(1))
	f.Add(pcm(square), uint16(2048), uint8(2))
	f.Add([]byte{1}, uint16(0), uint8(255))

	d := sharedDecoder(f)
	f.Fuzz(func(t *testing.T, audio []byte, chunk uint16, finalizeEvery uint8) {
		samples := make([]int16, len(audio)/2)
		for i := range samples {
			samples[i] = int16(binary.LittleEndian.Uint16(audio[2*i:]))
		}
		s, err := d.NewStream(StreamOptions{Partials: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		total := float64(len(samples)) / SampleRate
		var finals []Result
		check := func(evs []Event, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.At < 0 || ev.At > total+1e-9 {
					t.Fatalf("event at %.3f outside the audio", ev.At)
				}
				if ev.Kind == Final {
					finals = append(finals, ev.Result)
				}
			}
		}
		n := max(int(chunk), 1)
		for i := 0; len(samples) > 0; i++ {
			k := min(n, len(samples))
			check(s.Push(samples[:k]))
			samples = samples[k:]
			if finalizeEvery != 0 && i%int(finalizeEvery) == 0 {
				check(s.Finalize())
			}
		}
		check(s.End())
		checkResults(t, finals)
		if s.mapErrors != 0 {
			t.Fatalf("%d hypotheses did not fit the kept frames", s.mapErrors)
		}
	})
}
