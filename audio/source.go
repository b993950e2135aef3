package audio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/earshot-app/earshot/internal/clock"
)

// Source is a stream of audio frames: interleaved 16-bit PCM in the layout
// Format reports (Format().Encoding is always EncodingLinear16). The
// microphone ([Capture]) and recordings replayed from memory ([Replay]) are
// Sources, so live captions can be tested, demonstrated and screenshotted
// without a sound card.
//
// Read blocks until the next frame is available and returns it. Every frame
// holds the same whole number of sample frames (one sample per channel),
// except that the last frame of a finite source may be shorter. The
// returned slice belongs to the Source and is valid only until the next
// call to Read: callers that keep audio copy it. Read returns io.EOF after
// the last frame of a finite source, ctx.Err() when ctx ends first, and an
// error matching [ErrSourceClosed] once Close has been called (a Read
// blocked at that moment returns at once).
//
// Read must not be called from more than one goroutine at a time; Format
// and Close are safe to call from any goroutine. Close is idempotent.
type Source interface {
	Format() Format
	Read(ctx context.Context) ([]int16, error)
	Close() error
}

// ErrSourceClosed is matched by the error Read returns once the Source has
// been closed.
var ErrSourceClosed = errors.New("audio: source closed")

// Frame durations a Source accepts: long enough to hold a sample at the
// lowest rate, short enough that the audio stays live.
const (
	// DefaultFrameDuration is the frame length of Sources configured with
	// none: 20 ms, which is what streaming speech services recommend.
	DefaultFrameDuration = 20 * time.Millisecond
	minFrameDuration     = time.Millisecond
	maxFrameDuration     = time.Second
)

// FrameLen returns the sample frames in one frame of duration d at rate
// (rounded to the nearest, at least one), checking d's range.
func FrameLen(d time.Duration, rate int) (int, error) {
	if d < minFrameDuration || d > maxFrameDuration {
		return 0, fmt.Errorf("frame duration %v is outside %v..%v", d, minFrameDuration, maxFrameDuration)
	}
	n := (int64(d)*int64(rate) + int64(time.Second)/2) / int64(time.Second)
	return int(max(n, 1)), nil
}

// FramesDuration is the duration of n sample frames at rate, without
// overflowing for any n a looping source reaches in practice (n*1e9 would
// after days).
func FramesDuration(n int64, rate int) time.Duration {
	r := int64(rate)
	return time.Duration(n/r)*time.Second + time.Duration(n%r*int64(time.Second)/r)
}

// checkSourceFormat checks a Source's format: linear16 and a valid layout.
func checkSourceFormat(f Format) error {
	if f.Encoding != EncodingLinear16 {
		return fmt.Errorf("audio: a source delivers linear16, not %q", f.Encoding)
	}
	return f.Validate()
}

// Clock is the time source of paced Sources: internal/clock's, shared
// with the sessions. Tests inject a fake one to control pacing without
// sleeping; nil stands for the system clock.
type Clock = clock.Clock

// Timer is the timer a Clock hands out.
type Timer = clock.Timer

// SystemClock is the Clock of the real time.
type SystemClock = clock.Real

// The Sources of this package.
var (
	_ Source = (*Replay)(nil)
)
