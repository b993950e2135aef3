//go:build noengine

package audio

// libopus is not part of the noengine build: Ogg Opus is neither decoded
// nor encoded, and says so. Audio kept with history is Ogg Opus, so this
// build keeps none (sessions logs why and carries on).

func newOpusDecoder(int, int) (opusDecoder, error) {
	return nil, &NotInBuildError{What: "Opus audio"}
}

func newOpusEncoder(int, int, int) (opusEncoder, error) {
	return nil, &NotInBuildError{What: "Opus audio"}
}
