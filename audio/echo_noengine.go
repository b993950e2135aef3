//go:build noengine

package audio

import "time"

// EchoCancellation: this build does not cancel echo. A meeting's
// microphone side then also hears what the speakers play, unless the
// person wears headphones.
const EchoCancellation = false

// EchoCanceller is absent from this build: speexdsp, its library, is not
// part of the noengine build. NewEchoCanceller says so, and no canceller
// is ever made; the agent then mutes the microphone while it speaks, as
// it does whenever echo cancellation is unavailable.
type EchoCanceller struct{}

// NewEchoCanceller returns a *NotInBuildError.
func NewEchoCanceller(int, time.Duration) (*EchoCanceller, error) {
	return nil, &NotInBuildError{What: "echo cancellation"}
}

// FrameLen is 0: there is no canceller (NewEchoCanceller never returns
// one).
func (*EchoCanceller) FrameLen() int { return 0 }

// Process returns a *NotInBuildError.
func (*EchoCanceller) Process(_, _, _ []int16) error {
	return &NotInBuildError{What: "echo cancellation"}
}

// Close does nothing: there is nothing to free.
func (*EchoCanceller) Close() {}
