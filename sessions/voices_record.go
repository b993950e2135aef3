package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// synthesisHistory is the part of history a synthesis writes to: its
// record, its request and text, and its audio. *store.DB implements it.
type synthesisHistory interface {
	RecordHistory
	SaveResponse(ctx context.Context, id int64, body []byte, transcript string) error
	SaveAudio(ctx context.Context, id int64, a store.Audio) error
}

// synthesisHistoryOf returns h as a synthesis writes to it: nil without
// history (a nil VoiceHistory stays a nil interface).
func synthesisHistoryOf(h VoiceHistory) synthesisHistory {
	if h == nil {
		return nil
	}
	return h
}

// SynthesisDetails is the JSON saved as a synthesis's Details in history.
type SynthesisDetails struct {
	Voice                string  `json:"voice"`
	Family               string  `json:"family"`
	Speed                float64 `json:"speed"`
	Expressivity         int     `json:"expressivity"`
	TurnByTurn           bool    `json:"turn_by_turn,omitempty"`
	TimeToFirstAudioMS   float64 `json:"time_to_first_audio_ms"`
	PlaybackLatencyMS    float64 `json:"playback_latency_ms,omitempty"`
	Stopped              bool    `json:"stopped,omitempty"`
	Turns                int     `json:"turns"`
	SampleRate           int     `json:"sample_rate"`
	ServiceModel         string  `json:"service_model,omitempty"`
	InterruptedSpoken    string  `json:"interrupted_spoken,omitempty"`
	InterruptedRemaining string  `json:"interrupted_remaining,omitempty"`
	// Unspoken is the text a partial synthesis never spoke.
	Unspoken string `json:"unspoken,omitempty"`
}

// synthesisRecord is the JSON saved as a synthesis's response: the request.
type synthesisRecord struct {
	Text         string  `json:"text"`
	Voice        string  `json:"voice"`
	Speed        float64 `json:"speed,omitempty"`
	Expressivity int     `json:"expressivity,omitempty"`
	TurnByTurn   bool    `json:"turn_by_turn,omitempty"`
}

func speedOf(r SynthesisRequest) float64 {
	if r.Speed == 0 {
		return 1
	}
	return r.Speed
}

// synthesisTitle is the start of the text, on one line.
func synthesisTitle(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(t) > 60 {
		t = string([]rune(t)[:59]) + "…"
	}
	return t
}

// save records the synthesis in history once it has ended, through the
// sessions' one record: its details, its request and text (searchable),
// its audio as WAV, then how it ended. The record is opened only now,
// because its details (time to first audio, the service's model, what an
// interruption left) are known only now and a record's details are
// written when it is opened. What could not be saved is logged and
// reported as a *SaveFailedEvent, and what history holds as a final
// *HistoryEvent. It returns the session's id, 0 without history or when
// the entry could not be made.
func (r *synthRun) save(ctx context.Context, res SynthesisResult, runErr error) int64 {
	s := r.s
	if s.hist == nil {
		return 0
	}
	req := s.req
	d := SynthesisDetails{
		Voice: req.Voice, Family: string(req.Family()), Speed: speedOf(req), Expressivity: req.Expressivity,
		TurnByTurn: req.TurnByTurn, TimeToFirstAudioMS: ms(res.TimeToFirstAudio), Stopped: res.Stopped,
		Turns: len(res.Turns), SampleRate: res.SampleRate, ServiceModel: res.Model,
	}
	if res.HasPlaybackLatency {
		d.PlaybackLatencyMS = ms(res.PlaybackLatency)
	}
	for _, t := range res.Turns {
		if t.State == TurnInterrupted {
			d.InterruptedSpoken, d.InterruptedRemaining = t.Spoken, t.Remaining
			break
		}
	}
	if res.Partial != nil {
		d.Unspoken = res.Partial.Unspoken
	}
	details, _ := json.Marshal(d)
	rec := synthesisRecord{Text: req.Text, Voice: req.Voice, Speed: speedOf(req), Expressivity: req.Expressivity, TurnByTurn: req.TurnByTurn}
	opts, _ := json.Marshal(synthesisRecord{Voice: rec.Voice, Speed: rec.Speed, Expressivity: rec.Expressivity, TurnByTurn: rec.TurnByTurn})
	body, _ := json.Marshal(rec)

	record := openRecord(ctx, s.hist, store.Session{
		Kind:    store.KindSynthesis,
		Title:   synthesisTitle(req.Text),
		Source:  req.Voice,
		Backend: s.v.cfg.Backend,
		Model:   req.Voice,
		Options: string(opts),
		Details: string(details),
		Started: r.began,
	}, r.clock, s.v.log, s.emit)
	s.v.cfg.Inspector.Bind(s.wireLabel, record.ID())
	record.save(ctx, "the text", bounded(func(ctx context.Context, id int64) error {
		return s.hist.SaveResponse(ctx, id, body, req.Text)
	}))
	if len(res.PCM) > 0 {
		record.saveOnce(ctx, "the audio", bounded(func(ctx context.Context, id int64) error {
			var wav bytes.Buffer
			if err := audio.EncodeWAV(&wav, res.PCM, res.SampleRate, 1); err != nil {
				return err
			}
			return s.hist.SaveAudio(ctx, id, store.Audio{ContentType: "audio/wav", Encoding: api.EncodingLinear16, SampleRate: res.SampleRate, Data: wav.Bytes()})
		}))
	}
	status := store.StatusDone
	switch {
	case res.Partial != nil:
		status = store.StatusPartial
	case runErr != nil:
		status = store.StatusFailed
	case res.Stopped:
		status = store.StatusCancelled
	}
	record.finish(status, res.Duration().Seconds(), runErr)
	return record.ID()
}

// bounded gives a write to history saveTimeout at most.
func bounded(write func(ctx context.Context, id int64) error) func(ctx context.Context, id int64) error {
	return func(ctx context.Context, id int64) error {
		ctx, cancel := context.WithTimeout(ctx, saveTimeout)
		defer cancel()
		return write(ctx, id)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
