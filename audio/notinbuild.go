package audio

// NotInBuildError is returned by a feature whose C library is left out of
// this build of Earshot (the noengine build, made for Windows, where the
// Debian libraries behind MP3 encoding, Opus and echo cancellation do not
// exist): the feature is absent, and says so, rather than pretending.
type NotInBuildError struct {
	// What names the feature for a person: "MP3 encoding".
	What string
}

func (e *NotInBuildError) Error() string {
	return e.What + " is not part of this build of Earshot"
}
