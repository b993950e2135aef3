package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// STTModel is a speech-to-text model listed by GET /v1/models.
type STTModel struct {
	Name            string   `json:"name"`
	CanonicalName   string   `json:"canonical_name"`
	Architecture    string   `json:"architecture"`
	Languages       []string `json:"languages"`
	Version         string   `json:"version"`
	UUID            string   `json:"uuid"`
	Batch           bool     `json:"batch"`
	Streaming       bool     `json:"streaming"`
	FormattedOutput bool     `json:"formatted_output"`
	// Engine names the real engine behind the model. Earshot's local
	// engine sets it; the hosted service does not send it.
	Engine string `json:"engine,omitempty"`
}

// TTSModel is a text-to-speech voice listed by GET /v1/models.
type TTSModel struct {
	Name          string           `json:"name"`
	CanonicalName string           `json:"canonical_name"`
	Architecture  string           `json:"architecture"`
	Languages     []string         `json:"languages"`
	Version       string           `json:"version"`
	UUID          string           `json:"uuid"`
	Metadata      *TTSModelDetails `json:"metadata,omitempty"`
	// Engine names the real synthesiser behind the voice (local engine only).
	Engine string `json:"engine,omitempty"`
}

// TTSModelDetails describes a voice.
type TTSModelDetails struct {
	Accent   string   `json:"accent,omitempty"`
	Age      string   `json:"age,omitempty"`
	Color    string   `json:"color,omitempty"`
	Image    string   `json:"image,omitempty"`
	Sample   string   `json:"sample,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	UseCases []string `json:"use_cases,omitempty"`
}

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	STT []STTModel `json:"stt"`
	TTS []TTSModel `json:"tts"`
}

// Models lists the models the service offers. On a regional endpoint the
// whisper models, which no region serves, are left out so pickers never
// offer them.
func (c *Client) Models(ctx context.Context, includeOutdated bool) (*ModelList, error) {
	var q url.Values
	if includeOutdated {
		q = url.Values{"include_outdated": {"true"}}
	}
	var out ModelList
	if err := c.doJSON(ctx, http.MethodGet, PathModels, q, nil, &out, authDefault); err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	if c.endpoint.Region.Regional() {
		out.STT = slices.DeleteFunc(out.STT, func(m STTModel) bool {
			return IsWhisperModel(m.Name) || IsWhisperModel(m.CanonicalName)
		})
	}
	return &out, nil
}

// ListenModels returns the models usable on /v1/listen (continuous
// speech-to-text): the turn-aware flux models are served on /v2/listen only.
func (l *ModelList) ListenModels() []STTModel {
	var out []STTModel
	for _, m := range l.STT {
		if !IsTurnAwareModel(m.CanonicalName) && !IsTurnAwareModel(m.Name) {
			out = append(out, m)
		}
	}
	return out
}

// IsTurnAwareModel reports whether model is a turn-aware (flux-general-*)
// speech-to-text model, served only on /v2/listen.
func IsTurnAwareModel(model string) bool {
	return strings.HasPrefix(strings.ToLower(model), "flux-general-")
}

// SpeakVoices returns the voices usable on /v1/speak: the aura voices.
// A flux voice is served on /v2/speak only and is never among them.
func (l *ModelList) SpeakVoices() []TTSModel {
	return l.voices(IsAuraVoice)
}

// TurnVoices returns the voices usable on /v2/speak (turn-based
// synthesis): the flux voices. An aura voice is never among them.
func (l *ModelList) TurnVoices() []TTSModel {
	return l.voices(IsFluxVoice)
}

// voices returns the voices whose canonical name (or, when the service
// sent none, name) is of a family.
func (l *ModelList) voices(family func(string) bool) []TTSModel {
	var out []TTSModel
	for _, m := range l.TTS {
		name := m.CanonicalName
		if name == "" {
			name = m.Name
		}
		if family(name) {
			out = append(out, m)
		}
	}
	return out
}
