//go:build !noengine

package audio

import (
	"fmt"

	"gopkg.in/hraban/opus.v2"
)

// The Ogg Opus decoder (opus.go) and encoder (encode_opus.go) reach
// libopus only through these two constructors, so that a build without
// the library (libopus_noengine.go) leaves out nothing else.

func newOpusDecoder(rate, channels int) (opusDecoder, error) {
	return opus.NewDecoder(rate, channels)
}

func newOpusEncoder(rate, channels, bitRate int) (opusEncoder, error) {
	enc, err := opus.NewEncoder(rate, channels, opus.AppAudio)
	if err != nil {
		return nil, fmt.Errorf("libopus: %w", err)
	}
	if err := enc.SetBitrate(bitRate); err != nil {
		return nil, fmt.Errorf("libopus: set bit rate %d: %w", bitRate, err)
	}
	return enc, nil
}
