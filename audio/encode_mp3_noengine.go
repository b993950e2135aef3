//go:build noengine

package audio

import "io"

// newMP3Encoder returns a *NotInBuildError: libmp3lame is not part of the
// noengine build. MP3 is still decoded (mp3.go is pure Go).
func newMP3Encoder(io.Writer, EncodeSpec) (encoderImpl, error) {
	return nil, &NotInBuildError{What: "MP3 encoding"}
}
