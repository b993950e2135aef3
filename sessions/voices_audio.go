package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// SaveEncodings are the formats a synthesis can be saved in, in the order
// pickers offer them.
var SaveEncodings = []string{api.EncodingMP3, api.EncodingLinear16, api.EncodingOpus, api.EncodingFLAC, api.EncodingAAC, api.EncodingMulaw, api.EncodingAlaw}

// SaveExtension returns the file extension of a saved encoding: .wav for
// linear16, mulaw and alaw (in a WAV container), .ogg for opus.
func SaveExtension(encoding string) string {
	switch encoding {
	case api.EncodingLinear16, api.EncodingMulaw, api.EncodingAlaw:
		return ".wav"
	case api.EncodingOpus:
		return ".ogg"
	}
	return "." + encoding
}

// EncodingForPath returns the encoding a file name's extension asks for:
// .mp3, .wav (linear16), .ogg or .opus, .flac, .aac; false for another.
func EncodingForPath(path string) (string, bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mp3":
		return api.EncodingMP3, true
	case ".wav":
		return api.EncodingLinear16, true
	case ".ogg", ".opus":
		return api.EncodingOpus, true
	case ".flac":
		return api.EncodingFLAC, true
	case ".aac":
		return api.EncodingAAC, true
	}
	return "", false
}

// EncodeAudio writes 16-bit mono pcm at rate to w in encoding (one of
// SaveEncodings), resampled to the encoding's rate where it has one
// (mp3 and aac 22.05 kHz, opus and flac 48 kHz, mu-law and A-law 8 kHz,
// linear16 at its own rate when the service offers it, else 24 kHz).
//
// The file is made in memory and then written to w, so that it has its
// real sizes (WAV's RIFF and data sizes, FLAC's sample count) even when w
// cannot seek back to write them: a saved file is not a stream.
func EncodeAudio(ctx context.Context, w io.Writer, pcm []int16, rate int, encoding string) error {
	var file audio.SeekBuffer
	if err := encodeAudio(ctx, &file, pcm, rate, encoding); err != nil {
		return err
	}
	if _, err := w.Write(file.Bytes()); err != nil {
		return fmt.Errorf("save audio: %w", err)
	}
	return nil
}

func encodeAudio(ctx context.Context, w io.Writer, pcm []int16, rate int, encoding string) error {
	if !slices.Contains(SaveEncodings, encoding) {
		return fmt.Errorf("save audio: %q is not a format to save in; use %s", encoding, strings.Join(SaveEncodings, ", "))
	}
	spec := audio.EncodeSpec{Encoding: encoding}
	if encoding == api.EncodingLinear16 {
		spec.SampleRate = rate
		if _, err := spec.Normalize(); err != nil {
			spec.SampleRate = 0
		}
	}
	enc, err := audio.NewEncoder(ctx, w, spec)
	if err != nil {
		return fmt.Errorf("save audio: %w", err)
	}
	out := pcm
	if r := enc.Spec().SampleRate; r != rate {
		f, err := audio.Resample(audio.Int16ToFloat32(nil, pcm), rate, r, 1)
		if err != nil {
			enc.Close()
			return fmt.Errorf("save audio: %w", err)
		}
		out = audio.Float32ToInt16(nil, f)
	}
	if err := enc.Write(out); err != nil {
		enc.Close()
		return fmt.Errorf("save audio: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("save audio: %w", err)
	}
	return nil
}

// Playing is audio played again through the speaker. Its life is the
// sessions' one lifecycle; it reports no events, and its Events channel
// closes when it ends. Stop, Played, Done and Wait are safe for
// concurrent use.
type Playing struct {
	*lifecycle
	player Player // set before Play returns
	total  time.Duration
}

// Play plays pcm (16-bit mono at rate) on the configured speaker, in the
// background. ctx bounds the playing.
func (v *Voices) Play(ctx context.Context, pcm []int16, rate int) (*Playing, error) {
	return playOn(ctx, v.cfg.Speakers, v.cfg.OutputDevice, pcm, rate)
}

// playOn plays 16-bit mono pcm at rate on the speaker device of
// speakers, in the background; ctx bounds the playing.
func playOn(ctx context.Context, speakers Speakers, device string, pcm []int16, rate int) (*Playing, error) {
	return playFrom(ctx, speakers, device, pcmSlice(pcm), rate, audio.FramesDuration(int64(len(pcm)), rate))
}

// pcmSource gives audio to play a piece at a time, io.EOF after the last
// (with or without samples).
type pcmSource func() ([]int16, error)

// pcmSlice gives pcm in one piece.
func pcmSlice(pcm []int16) pcmSource {
	done := false
	return func() ([]int16, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return pcm, io.EOF
	}
}

// playFrom plays what src gives, total long, at rate on device, in the
// background.
func playFrom(ctx context.Context, speakers Speakers, device string, src pcmSource, rate int, total time.Duration) (*Playing, error) {
	if speakers == nil {
		return nil, errors.New("this build cannot play audio")
	}
	if total <= 0 || rate <= 0 {
		return nil, errors.New("there is no audio to play")
	}
	pl := &Playing{lifecycle: newLifecycle("play", nil), total: total}
	err := pl.start(ctx, func(ctx context.Context) (runFunc, error) {
		p, err := speakers.Open(ctx, device, rate)
		if err != nil {
			return nil, &SpeakerError{Err: err}
		}
		pl.player = p
		return func(ctx context.Context) error { return pl.play(ctx, src) }, nil
	})
	if err != nil {
		return nil, err
	}
	return pl, nil
}

// play writes what src gives to the speaker, as the speaker takes it,
// and waits until it has been played, or Stop silences it.
func (pl *Playing) play(ctx context.Context, src pcmSource) error {
	p := pl.player
	defer p.Close()
	var watch sync.WaitGroup
	defer watch.Wait() // after cancel: the watcher is gone before the speaker closes
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch.Go(func() {
		select {
		case <-pl.stopping():
			p.Stop()
			cancel()
		case <-ctx.Done():
		}
	})
	for {
		pcm, err := src()
		if len(pcm) > 0 {
			if werr := p.Write(ctx, pcm); werr != nil {
				return pl.ignoreStopped(werr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return pl.ignoreStopped(err)
		}
	}
	return pl.ignoreStopped(p.Drain(ctx))
}

// ignoreStopped drops the error of a playing that Stop ended.
func (pl *Playing) ignoreStopped(err error) error {
	select {
	case <-pl.stopping():
		return nil
	default:
		return err
	}
}

// Played returns the playhead.
func (pl *Playing) Played() time.Duration { return min(pl.player.Played(), pl.total) }

// Duration returns the length of what is played.
func (pl *Playing) Duration() time.Duration { return pl.total }

// Done is closed once everything was played, or Stop.
func (pl *Playing) Done() <-chan struct{} { return pl.lifecycle.Done() }

// Stop silences the speaker at once and waits for the end. It is
// idempotent and returns why playing failed, if it did.
func (pl *Playing) Stop() error { return pl.lifecycle.Stop() }

// Wait waits until everything was played or Stop, and returns why
// playing failed, if it did.
func (pl *Playing) Wait() error {
	<-pl.Done()
	return pl.Err()
}

// SavedSynthesis is a synthesis read back from history.
type SavedSynthesis struct {
	Session store.Session
	Details SynthesisDetails
	Text    string
	// PCM is 16-bit mono at SampleRate; empty when no audio was kept.
	PCM        []int16
	SampleRate int
}

// History lists the syntheses saved, newest first.
func (v *Voices) History(ctx context.Context, limit int) ([]store.Session, error) {
	if v.cfg.History == nil {
		return nil, nil
	}
	return v.cfg.History.Sessions(ctx, store.Filter{Kind: store.KindSynthesis, Limit: limit})
}

// Open reads a saved synthesis back with its text and audio.
func (v *Voices) Open(ctx context.Context, id int64) (SavedSynthesis, error) {
	h := v.cfg.History
	if h == nil {
		return SavedSynthesis{}, errors.New("there is no history")
	}
	sess, err := h.Session(ctx, id)
	if err != nil {
		return SavedSynthesis{}, err
	}
	if sess.Kind != store.KindSynthesis {
		return SavedSynthesis{}, fmt.Errorf("session %d is not a synthesis but %s", id, sess.Kind)
	}
	out := SavedSynthesis{Session: sess}
	if sess.Details != "" {
		if err := json.Unmarshal([]byte(sess.Details), &out.Details); err != nil {
			return out, fmt.Errorf("the saved synthesis is damaged: %w", err)
		}
	}
	body, err := h.Response(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return out, err
	default:
		var rec synthesisRecord
		if err := json.Unmarshal(body, &rec); err != nil {
			return out, fmt.Errorf("the saved synthesis is damaged: %w", err)
		}
		out.Text = rec.Text
	}
	a, err := h.Audio(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return out, nil
	case err != nil:
		return out, err
	}
	b, err := audio.Decode(ctx, bytes.NewReader(a.Data))
	if err != nil {
		return out, fmt.Errorf("the saved audio cannot be read: %w", err)
	}
	mono := audio.MixToMono(nil, b.Samples, b.Channels)
	out.PCM, out.SampleRate = audio.Float32ToInt16(nil, mono), b.SampleRate
	return out, nil
}

// Delete removes a saved synthesis and its audio.
func (v *Voices) Delete(ctx context.Context, id int64) error {
	if v.cfg.History == nil {
		return errors.New("there is no history")
	}
	return v.cfg.History.DeleteSession(ctx, id)
}
