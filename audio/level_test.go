package audio

import (
	"math"
	"testing"
	"time"
)

func TestLevel(t *testing.T) {
	square := make([]int16, 1600)
	for i := range square {
		square[i] = 32767
		if i%16 >= 8 {
			square[i] = -32768
		}
	}
	tests := []struct {
		name           string
		frame          []int16
		wantRMS, wantP float64
	}{
		// 1 kHz at 16 kHz: 0.1 s is whole periods, so the RMS is exact.
		{"full-scale sine", sine16(1000, 16000, 1600, 1, 32767), -3.0103, -0.0003},
		{"half-scale sine", sine16(1000, 16000, 1600, 1, 16384), -9.0309, -6.0206},
		{"stereo sine", sine16(1000, 16000, 1600, 2, 32767), -3.0103, -0.0003},
		{"full-scale square", square, -0.0001, 0},
		{"one LSB", []int16{1, -1, 1, -1}, -90.309, -90.309},
		{"silence", make([]int16, 320), LevelFloor, LevelFloor},
		{"empty", nil, LevelFloor, LevelFloor},
		{"below the floor", append(make([]int16, 100000), 1), LevelFloor, -90.309},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rms, peak := Level(tt.frame)
			if math.Abs(rms-tt.wantRMS) > 0.001 || math.Abs(peak-tt.wantP) > 0.001 {
				t.Errorf("Level = %.4f dBFS RMS, %.4f peak; want %.4f, %.4f", rms, peak, tt.wantRMS, tt.wantP)
			}
		})
	}
}

func TestLevelFraction(t *testing.T) {
	tests := []struct{ db, want float64 }{
		{LevelFloor, 0}, {-200, 0}, {math.Inf(-1), 0}, {-48, 0.5}, {0, 1}, {6, 1},
	}
	for _, tt := range tests {
		if got := LevelFraction(tt.db); got != tt.want {
			t.Errorf("LevelFraction(%v) = %v, want %v", tt.db, got, tt.want)
		}
	}
}

// TestMeterBallistics: a tone switched on and off. The RMS level rises with
// the attack time constant and falls with the release one; the peak jumps
// up at once and falls with the release; both are timed by the audio, not
// by how it is cut into frames.
func TestMeterBallistics(t *testing.T) {
	const rate = 16000
	frame := func(ms int, amp float64) []int16 { return sine16(500, rate, rate*ms/1000, 1, amp) }
	tone := frame(10, 32767) // -3.01 dBFS RMS, whole periods
	quiet := frame(10, 0)

	var m Meter // zero value: 16 kHz mono, 10 ms attack, 300 ms release
	if r, p := m.Levels(); r != LevelFloor || p != LevelFloor {
		t.Fatalf("a new meter reads %v, %v", r, p)
	}
	// One 10 ms frame is one attack time constant: 63% of the way.
	rms, peak := m.Update(tone)
	want := LevelFloor + (-3.0103-LevelFloor)*(1-math.Exp(-1))
	if math.Abs(rms-want) > 0.01 || math.Abs(peak) > 0.001 {
		t.Fatalf("after 10 ms of tone: %.3f RMS (want %.3f), %.3f peak (want 0)", rms, want, peak)
	}
	for range 10 {
		rms, _ = m.Update(tone)
	}
	if math.Abs(rms+3.0103) > 0.01 {
		t.Fatalf("after 110 ms of tone the RMS reads %.3f, want -3.01", rms)
	}
	// Silence: 300 ms (one release time constant) falls 63% of the way to
	// the floor, for RMS and peak alike.
	var r2, p2 float64
	for range 30 {
		r2, p2 = m.Update(quiet)
	}
	wantR := -3.0103 + (LevelFloor+3.0103)*(1-math.Exp(-1))
	wantP := 0 + LevelFloor*(1-math.Exp(-1))
	if math.Abs(r2-wantR) > 0.05 || math.Abs(p2-wantP) > 0.05 {
		t.Errorf("after 300 ms of silence: %.2f RMS (want %.2f), %.2f peak (want %.2f)", r2, wantR, p2, wantP)
	}
	if lr, lp := m.Levels(); lr != r2 || lp != p2 {
		t.Errorf("Levels %v, %v differ from the last Update %v, %v", lr, lp, r2, p2)
	}

	// The same audio in 20 ms frames ends at the same levels.
	var m2 Meter
	for range 11 {
		m2.Update(tone)
	}
	for range 15 {
		m2.Update(frame(20, 0))
	}
	if r, p := m2.Levels(); math.Abs(r-r2) > 0.001 || math.Abs(p-p2) > 0.001 {
		t.Errorf("20 ms frames end at %.3f, %.3f; 10 ms frames at %.3f, %.3f", r, p, r2, p2)
	}

	// An empty frame changes nothing; Reset drops to the floor.
	if r, _ := m.Update(nil); r != r2 {
		t.Errorf("an empty frame moved the meter to %v", r)
	}
	m.Reset()
	if r, p := m.Levels(); r != LevelFloor || p != LevelFloor {
		t.Errorf("after Reset: %v, %v", r, p)
	}
}

// TestMeterConfigured: sample rate, channels and time constants are
// honoured.
func TestMeterConfigured(t *testing.T) {
	m := Meter{SampleRate: 48000, Channels: 2, Attack: 40 * time.Millisecond}
	// 10 ms of 48 kHz stereo is a quarter of the attack time constant.
	rms, _ := m.Update(sine16(1000, 48000, 480, 2, 32767))
	want := LevelFloor + (-3.0103-LevelFloor)*(1-math.Exp(-0.25))
	if math.Abs(rms-want) > 0.01 {
		t.Errorf("RMS %.3f, want %.3f", rms, want)
	}
}

func BenchmarkLevel(b *testing.B) {
	frame := sine16(440, 16000, 320, 1, 10000)
	b.SetBytes(int64(2 * len(frame)))
	for b.Loop() {
		Level(frame)
	}
}
