package diarize

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		value     string
		batch     Version
		streaming Version // "" when streaming rejects it
	}{
		{"latest", V2, V1},
		{"v1", V1, V1},
		{"v2", V2, ""},
		{"v3", "", ""},
		{"", "", ""},
		{"LATEST", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := ParseBatch(tt.value)
			if got != tt.batch || (err != nil) != (tt.batch == "") {
				t.Errorf("ParseBatch(%q) = %q, %v; want %q", tt.value, got, err, tt.batch)
			}
			if err != nil && !errors.Is(err, ErrUnknownModel) {
				t.Errorf("ParseBatch error %v is not ErrUnknownModel", err)
			}
			got, err = ParseStreaming(tt.value)
			if got != tt.streaming || (err != nil) != (tt.streaming == "") {
				t.Errorf("ParseStreaming(%q) = %q, %v; want %q", tt.value, got, err, tt.streaming)
			}
			if err != nil && !errors.Is(err, ErrUnknownModel) {
				t.Errorf("ParseStreaming error %v is not ErrUnknownModel", err)
			}
		})
	}
}

func TestInfo(t *testing.T) {
	v1, v2 := V1.Info(), V2.Info()
	if v1.Arch != "v1" || v2.Arch != "v2" {
		t.Errorf("arch = %q, %q", v1.Arch, v2.Arch)
	}
	if v1.ModelUUID == "" || v1.ModelUUID == v2.ModelUUID {
		t.Errorf("model UUIDs %q and %q must be set and distinct", v1.ModelUUID, v2.ModelUUID)
	}
	if (Version("v9").Info() != Info{}) {
		t.Error("unknown version has metadata")
	}
	if NewOnline().Info() != v1 {
		t.Error("the streaming diariser is not v1")
	}
}
