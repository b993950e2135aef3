package audio

import (
	"math"
	"time"
)

// LevelFloor is the lowest level Level and Meter report, in dBFS: the
// dynamic range of 16-bit audio. Silence, whose level is minus infinity,
// reads as LevelFloor, so levels are always finite numbers a UI can draw.
const LevelFloor = -96.0

// Level returns the RMS and peak level of a frame of 16-bit samples (all
// channels together) in dB relative to full scale (32768), clamped below
// at LevelFloor. A full-scale sine reads -3.01 dBFS RMS and 0 dBFS peak; an
// empty or silent frame reads LevelFloor for both.
func Level(frame []int16) (rmsDBFS, peakDBFS float64) {
	if len(frame) == 0 {
		return LevelFloor, LevelFloor
	}
	var sum float64
	var peak int32
	for _, v := range frame {
		x := int32(v)
		sum += float64(x * x)
		if x < 0 {
			x = -x
		}
		peak = max(peak, x)
	}
	rms := math.Sqrt(sum/float64(len(frame))) / 32768
	return toDBFS(rms), toDBFS(float64(peak) / 32768)
}

// toDBFS converts an amplitude relative to full scale to dB, clamped at
// LevelFloor (which also catches log10(0) = -Inf).
func toDBFS(a float64) float64 {
	db := 20 * math.Log10(a)
	if !(db > LevelFloor) { // also NaN
		return LevelFloor
	}
	return db
}

// LevelFraction maps a level in dBFS to the filled fraction of a level bar,
// 0 at LevelFloor and 1 at full scale, linear in dB.
func LevelFraction(db float64) float64 {
	f := (db - LevelFloor) / -LevelFloor
	switch {
	case f > 1:
		return 1
	case f > 0:
		return f
	}
	return 0
}

// Default ballistics of a Meter.
const (
	// DefaultMeterAttack is how fast a Meter follows a rising level: the
	// time constant of the exponential approach, in the style of a VU
	// meter that is fast enough to show each syllable.
	DefaultMeterAttack = 10 * time.Millisecond
	// DefaultMeterRelease is how fast it falls back: slow enough that a
	// level bar sampled at 30 Hz does not flicker between words.
	DefaultMeterRelease = 300 * time.Millisecond
)

// Meter smooths the levels of successive frames for a level bar: the RMS
// level rises with the attack time constant and falls with the release
// one; the peak level jumps up at once and falls with the release time
// constant, so short peaks stay visible. Levels move in dB, so a fall looks
// even on a dB scale. Time is counted in audio, from the length of each
// frame, so the ballistics do not depend on how often Update is called.
//
// The zero value is a meter for 16 kHz mono with the default ballistics.
// A Meter is not safe for concurrent use: the goroutine that reads the
// audio updates it and passes the levels on (at most ~30 times a second is
// all a UI can show).
type Meter struct {
	// SampleRate of the frames passed to Update; 0 means SpeechRate.
	SampleRate int
	// Channels of the frames passed to Update; 0 means 1.
	Channels int
	// Attack and Release are the time constants; 0 means
	// DefaultMeterAttack and DefaultMeterRelease.
	Attack, Release time.Duration

	rms, peak float64
	primed    bool
}

// Update adds a frame and returns the smoothed RMS and peak levels in dBFS.
func (m *Meter) Update(frame []int16) (rmsDBFS, peakDBFS float64) {
	if !m.primed {
		m.rms, m.peak, m.primed = LevelFloor, LevelFloor, true
	}
	rate, ch := m.SampleRate, m.Channels
	if rate <= 0 {
		rate = SpeechRate
	}
	if ch <= 0 {
		ch = 1
	}
	attack, release := m.Attack, m.Release
	if attack <= 0 {
		attack = DefaultMeterAttack
	}
	if release <= 0 {
		release = DefaultMeterRelease
	}
	dt := float64(len(frame)/ch) / float64(rate)
	if dt == 0 {
		return m.rms, m.peak
	}
	rms, peak := Level(frame)
	if rms > m.rms {
		m.rms = approach(m.rms, rms, dt, attack)
	} else {
		m.rms = approach(m.rms, rms, dt, release)
	}
	if peak > m.peak {
		m.peak = peak
	} else {
		m.peak = approach(m.peak, peak, dt, release)
	}
	return m.rms, m.peak
}

// approach moves from cur toward target as a first-order filter with time
// constant tau would in dt seconds.
func approach(cur, target, dt float64, tau time.Duration) float64 {
	return cur + (target-cur)*(1-math.Exp(-dt/tau.Seconds()))
}

// Levels returns the smoothed RMS and peak levels in dBFS without adding
// audio; LevelFloor before the first Update.
func (m *Meter) Levels() (rmsDBFS, peakDBFS float64) {
	if !m.primed {
		return LevelFloor, LevelFloor
	}
	return m.rms, m.peak
}

// Reset forgets the audio so far: the levels drop to LevelFloor.
func (m *Meter) Reset() {
	m.rms, m.peak, m.primed = LevelFloor, LevelFloor, false
}
