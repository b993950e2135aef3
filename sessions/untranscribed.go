package sessions

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// untranscribedMin is the least audio left untranscribed at the end of a
// live session that makes it partial: less is the rounding of the last
// final's window, or the silence after the last word.
const untranscribedMin = 500 * time.Millisecond

// Why a live session stopped without the service's last words (the Err
// of an UntranscribedError).
var (
	ErrNotConnected  = errors.New("the service was not connected when it stopped")
	ErrServiceSilent = errors.New("the service stopped answering")
	ErrServiceSlow   = fmt.Errorf("the service was still working after %.0f minutes", maxCloseWait.Minutes())
)

// UntranscribedError is a live session (captions, a conversation) that
// was stopped and ended before the service transcribed the last of its
// audio: the service stopped answering, the connection was lost, or it
// was still working after the longest wait. What was transcribed is
// kept; history marks the entry partial.
type UntranscribedError struct {
	// Audio is how much audio, at the end, was not transcribed.
	Audio time.Duration
	// Err is why.
	Err error
}

func (e *UntranscribedError) Error() string {
	return strings.TrimSuffix(e.Summary(), ".") + ", because " + strings.TrimSuffix(e.Err.Error(), ".") + "."
}

// Summary says how much audio was not transcribed, without why.
func (e *UntranscribedError) Summary() string {
	return fmt.Sprintf("The last %.1f s of audio were not transcribed.", e.Audio.Seconds())
}

// Unwrap returns why.
func (e *UntranscribedError) Unwrap() error { return e.Err }
