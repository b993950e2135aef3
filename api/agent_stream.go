package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// ErrSettingsNotApplied is the error of audio sent before the service
// acknowledged Settings: the service would ignore it.
var ErrSettingsNotApplied = errors.New("the agent has not applied the settings yet; audio before SettingsApplied is ignored")

// AgentStream is a conversation with the voice agent on
// /v1/agent/converse. Settings is sent first, as the socket opens; audio
// is refused until the service acknowledges it. Next is called from one
// goroutine; the Send methods may be called from others.
type AgentStream struct {
	s *socket

	mu        sync.Mutex
	requestID string
	applied   bool
	listenV2  bool
}

// Converse opens a conversation with the agent, on the agent's host (the
// regional main host in a region), and sends settings, the first message.
// Settings that break a rule are refused before anything is sent.
func (c *Client) Converse(ctx context.Context, settings AgentSettings) (*AgentStream, error) {
	if err := settings.Validate(); err != nil {
		return nil, err
	}
	body, err := EncodeAgentMessage(&settings)
	if err != nil {
		return nil, err
	}
	// The agent takes no query parameters: everything is in Settings.
	s, rid, err := c.dial(ctx, PathAgent, nil)
	if err != nil {
		return nil, fmt.Errorf("open the agent conversation: %w", err)
	}
	a := &AgentStream{s: s, requestID: rid}
	if l := settings.Agent.Listen; l != nil {
		a.listenV2 = l.Provider.TurnAware()
	}
	if err := s.send(ctx, false, body, true); err != nil {
		_ = s.close()
		return nil, fmt.Errorf("send the agent's settings: %w", err)
	}
	return a, nil
}

// RequestID is the service's id of the conversation: the handshake's, or
// Welcome's once it came.
func (a *AgentStream) RequestID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requestID
}

// Applied reports whether the service acknowledged Settings.
func (a *AgentStream) Applied() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.applied
}

// Next returns the next message: a text message decoded by
// DecodeAgentMessage, or *AgentAudio for a binary frame. A text message
// that cannot be read comes as *UnknownMessage, to be shown. At the end
// of the conversation it returns io.EOF, or the error that ended it.
func (a *AgentStream) Next(ctx context.Context) (AgentMessage, error) {
	f, err := a.s.next(ctx)
	if err != nil {
		return nil, err
	}
	if f.binary {
		return &AgentAudio{Data: f.data}, nil
	}
	m, err := DecodeAgentMessage(f.data)
	if err != nil {
		return &UnknownMessage{Raw: f.data}, nil
	}
	a.mu.Lock()
	switch x := m.(type) {
	case *Welcome:
		if x.RequestID != "" {
			a.requestID = x.RequestID
		}
	case *SettingsApplied:
		a.applied = true
	}
	a.mu.Unlock()
	return m, nil
}

// SendAudio sends audio in the audio.input format. Audio before
// SettingsApplied is refused with ErrSettingsNotApplied; empty audio with
// ErrEmptyAudio.
func (a *AgentStream) SendAudio(ctx context.Context, audio []byte) error {
	if len(audio) == 0 {
		return ErrEmptyAudio
	}
	if !a.Applied() {
		return ErrSettingsNotApplied
	}
	return a.s.send(ctx, true, append([]byte(nil), audio...), false)
}

// Send checks m by the rules a client can check, and sends it. Settings
// is sent by Converse only; audio by SendAudio.
func (a *AgentStream) Send(ctx context.Context, m AgentMessage) error {
	switch m.(type) {
	case *AgentSettings:
		return errors.New("settings are sent once, as the conversation opens")
	case *AgentAudio:
		return errors.New("audio is sent with SendAudio")
	}
	a.mu.Lock()
	v2 := a.listenV2
	a.mu.Unlock()
	if err := CheckAgentClientMessage(m, v2); err != nil {
		return err
	}
	body, err := EncodeAgentMessage(m)
	if err != nil {
		return err
	}
	if err := a.s.send(ctx, false, body, true); err != nil {
		return err
	}
	if u, ok := m.(*UpdateListen); ok {
		a.mu.Lock()
		a.listenV2 = u.Listen.Provider.TurnAware()
		a.mu.Unlock()
	}
	return nil
}

// Close ends the conversation at once.
func (a *AgentStream) Close() error { return a.s.close() }

// ThinkModel is a language model the agent can think with.
type ThinkModel struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
}

// ThinkModels lists the models agent.think.provider can name, from the
// agent's host (the regional main host in a region).
func (c *Client) ThinkModels(ctx context.Context) ([]ThinkModel, error) {
	var out struct {
		Models []ThinkModel `json:"models"`
	}
	if err := c.doJSON(ctx, http.MethodGet, PathAgentModels, nil, nil, &out, authDefault); err != nil {
		return nil, fmt.Errorf("list the agent's models: %w", err)
	}
	return out.Models, nil
}
