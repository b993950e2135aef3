package sessions

import (
	"context"
	"fmt"
	"strings"

	"github.com/earshot-app/earshot/api"
)

// ModelLister is the part of the API client that Service uses.
type ModelLister interface {
	Models(ctx context.Context, includeOutdated bool) (*api.ModelList, error)
	Endpoint() api.Endpoint
}

// ServiceInfo describes the service the app is connected to.
type ServiceInfo struct {
	// Backend names who serves the requests: "Local engine" or "Hosted service".
	Backend string
	// URL is the base address requests go to; it never carries a key.
	URL string
	// Models lists the models the service offers, speech-to-text first.
	Models []ModelInfo
	// Local is set when the backend is the local engine on this
	// computer, which can stand in for any other.
	Local bool
}

// ModelInfo describes one model the service offers.
type ModelInfo struct {
	// Name is the model's name as requests give it, e.g. "nova-3".
	Name string
	// Kind is "speech-to-text" or "text-to-speech".
	Kind string
	// Engine names the real engine behind the model: what the local engine
	// reports, or the architecture the hosted service gives.
	Engine string
	// Languages lists the language tags the model understands or speaks.
	Languages []string
	// Batch and Streaming say whether the model serves whole files (REST)
	// and live streams (WebSocket).
	Batch, Streaming bool
}

// Model kinds.
const (
	KindSpeechToText = "speech-to-text"
	KindTextToSpeech = "text-to-speech"
)

// Service answers what the app is connected to. It is safe for
// concurrent use.
type Service struct {
	client  ModelLister
	backend string
}

// NewService describes the service behind client; backend names it for people.
func NewService(client ModelLister, backend string) *Service {
	return &Service{client: client, backend: backend}
}

// Info lists the service's models.
func (s *Service) Info(ctx context.Context) (ServiceInfo, error) {
	base := s.client.Endpoint().MainBase()
	base.User = nil
	info := ServiceInfo{Backend: s.backend, URL: base.String()}
	list, err := s.client.Models(ctx, false)
	if err != nil {
		return info, fmt.Errorf("list the service's models: %w", err)
	}
	for _, m := range list.STT {
		info.Models = append(info.Models, ModelInfo{
			Name:      m.Name,
			Kind:      KindSpeechToText,
			Engine:    engineOf(m.Engine, m.Architecture),
			Languages: m.Languages,
			Batch:     m.Batch,
			Streaming: m.Streaming,
		})
	}
	for _, m := range list.TTS {
		name := m.CanonicalName
		if name == "" {
			name = m.Name
		}
		info.Models = append(info.Models, ModelInfo{
			Name:      name,
			Kind:      KindTextToSpeech,
			Engine:    engineOf(m.Engine, m.Architecture),
			Languages: m.Languages,
			Batch:     true,
			Streaming: true,
		})
	}
	return info, nil
}

func engineOf(engine, arch string) string {
	if e := strings.TrimSpace(engine); e != "" {
		return e
	}
	return arch
}
