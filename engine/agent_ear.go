package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/engine/turn"
)

// agentEar turns the person's audio into what the agent reacts to: that
// they started speaking, and what they said once their turn ended. With
// a version v1 provider a turn ends where the recogniser's endpointing
// ends an utterance; with v2 where the turn detector ends the turn.
type agentEar struct {
	turnFeed // det is set for v2 only
}

// earEvent is what the ear heard: speech began, or a turn ended with
// what was said (text, possibly empty).
type earEvent struct {
	started bool
	text    string
}

func (s *agentSession) newEar(p api.ListenProvider) (*agentEar, error) {
	st, err := s.dec.NewStream(sphinx.StreamOptions{Partials: p.TurnAware()})
	if err != nil {
		return nil, fmt.Errorf("the recogniser could not start: %w", err)
	}
	ear := &agentEar{turnFeed{stream: st}}
	if p.TurnAware() {
		set := turn.DefaultSettings()
		if p.EOTThreshold != nil {
			set.EOTThreshold = *p.EOTThreshold
		}
		if p.EagerEOTThreshold != nil {
			set.EagerThreshold = *p.EagerEOTThreshold
		}
		if p.EOTTimeoutMS != nil {
			set.EOTTimeout = msDuration(*p.EOTTimeoutMS)
		}
		det, err := turn.New(set)
		if err != nil {
			_ = st.Close()
			return nil, &api.OptionError{Param: "agent.listen.provider", Reason: err.Error(), Code: api.CodeInvalidSettings}
		}
		ear.det = det
	}
	return ear, nil
}

func (a *agentEar) close() {
	if a != nil {
		_ = a.stream.Close()
	}
}

// closeAll frees the ear and the audio decoder, as the session ends.
func (s *agentSession) closeAll() {
	s.ear.close()
	s.ear = nil
	if s.audioIn != nil {
		s.audioIn.Close()
		s.audioIn = nil
	}
}

// relisten replaces the ear with one for p. The decoder serves one stream
// at a time, so the old ear goes first; when the new one cannot start,
// the old provider's comes back.
func (s *agentSession) relisten(p api.ListenProvider) error {
	s.ear.close()
	ear, err := s.newEar(p)
	if err != nil {
		s.ear, _ = s.newEar(s.listen)
		return err
	}
	s.ear, s.listen, s.listenV2 = ear, p, p.TurnAware()
	return nil
}

// hear decodes audio and passes it to the ear.
func (s *agentSession) hear(ctx context.Context, data []byte) error {
	pcm, err := s.audioIn.Decode(data)
	if err != nil {
		return fmt.Errorf("the audio could not be decoded; check that audio.input matches what is sent: %w", err)
	}
	s.heard += int64(len(pcm))
	evs, err := s.ear.feed(pcm)
	if err != nil {
		s.e.log.Error("recogniser failed", "request_id", s.rid, "err", err)
		return nil
	}
	s.onEar(ctx, evs)
	return nil
}

// feed passes 16 kHz audio to the recogniser, block by block for the turn
// detector.
func (a *agentEar) feed(pcm []int16) ([]earEvent, error) {
	var out []earEvent
	if a.det == nil {
		evs, err := a.stream.Push(pcm)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			switch ev.Kind {
			case sphinx.SpeechStarted:
				out = append(out, earEvent{started: true})
			case sphinx.Final:
				out = append(out, earEvent{text: strings.TrimSpace(ev.Result.Text)})
			}
		}
		return out, nil
	}
	msgs, err := a.push(pcm)
	return turnEvents(msgs), err
}

// forceEnd ends the turn in progress (ForceEndTurn, version v2).
func (a *agentEar) forceEnd() []earEvent {
	if a == nil || a.det == nil || !a.det.InTurn() {
		return nil
	}
	evs, err := a.stream.Finalize()
	if err != nil {
		return nil
	}
	msgs, _ := a.det.ForceEnd(a.evidence(evs))
	return turnEvents(msgs)
}

func turnEvents(msgs []turn.Message) []earEvent {
	var out []earEvent
	for _, m := range msgs {
		switch m.Event {
		case turn.StartOfTurn:
			out = append(out, earEvent{started: true})
		case turn.EndOfTurn:
			out = append(out, earEvent{text: strings.TrimSpace(m.Transcript())})
		}
	}
	return out
}

// onEar reacts to what the ear heard: speech stops the agent (barge-in);
// a turn's words are answered.
func (s *agentSession) onEar(ctx context.Context, evs []earEvent) {
	for _, ev := range evs {
		if ev.started {
			s.sendMsg(ctx, &api.UserStartedSpeaking{})
			if s.reply != nil {
				s.reply.cancel()
			}
			if s.queued != nil && s.queued.say != "" {
				s.queued = nil // what the agent was to say is not said over the person
			}
			continue
		}
		if ev.text != "" {
			s.heardAt = s.e.clock.Now()
			s.userSaid(ctx, ev.text)
		}
	}
}
