package diarize

import (
	"errors"
	"fmt"
)

// Version is a diarisation model version as named by diarize_model after
// "latest" is resolved.
type Version string

// The model versions.
const (
	// V1 is single-pass (sequential) ΔBIC clustering of word-aligned
	// chunks; in streaming it is the [Online] diariser.
	V1 Version = "v1"
	// V2 is agglomerative ΔBIC clustering of word-aligned segments with
	// Viterbi resegmentation.
	V2 Version = "v2"
)

// ErrUnknownModel reports a diarize_model value that names no version
// available for the request kind (batch or streaming).
var ErrUnknownModel = errors.New("diarize: unknown diarize_model")

// ParseBatch resolves a batch diarize_model value: latest, v1 or v2;
// latest is V2.
func ParseBatch(value string) (Version, error) {
	switch value {
	case "latest", string(V2):
		return V2, nil
	case string(V1):
		return V1, nil
	}
	return "", fmt.Errorf("%w: %q (batch takes latest, v1 or v2)", ErrUnknownModel, value)
}

// ParseStreaming resolves a streaming diarize_model value: latest or v1;
// latest is V1.
func ParseStreaming(value string) (Version, error) {
	switch value {
	case "latest", string(V1):
		return V1, nil
	}
	return "", fmt.Errorf("%w: %q (streaming takes latest or v1)", ErrUnknownModel, value)
}

// Info is metadata.diarize_info: which model labelled the speakers. Arch is
// the version, which is how a client learns what "latest" resolved to.
type Info struct {
	ModelUUID string `json:"model_uuid"`
	Arch      string `json:"arch"`
}

// Model UUIDs, fixed so that responses name the same model across runs
// and releases; change one only when that version's output changes.
const (
	v1UUID = "5f1c9a0e-6b7d-4c1e-9a53-2d8e4b7f0c31"
	v2UUID = "b8e3d4a2-1f60-4e9b-8c27-7a5d0e9f3b64"
)

// Info returns the metadata of v; the zero Info for an unknown version.
func (v Version) Info() Info {
	switch v {
	case V1:
		return Info{ModelUUID: v1UUID, Arch: string(V1)}
	case V2:
		return Info{ModelUUID: v2UUID, Arch: string(V2)}
	}
	return Info{}
}
