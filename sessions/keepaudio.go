package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/store"
)

// The audio of a transcription is kept with its text (when the settings'
// KeepAudio asks) as Ogg Opus: the 16 kHz audio sent to the service,
// mono or the channels of a meeting, encoded as it comes into a spool on
// the disk (24 kb/s a channel: 11 MB an hour of mono), so that memory
// holds none of it however long the session, and saved when the session
// ends, however it ends. The audio
// runs on the captions' clock: sample n of the kept audio is second
// n/16000 of the session, muted stretches included, as silence.

// Kept audio's format in history, as the re-run reads it.
const (
	KeptContentType = "audio/ogg"
	KeptEncoding    = "opus"
)

const (
	keptBitRate = 24000 // per channel: clear speech, and recognisable again
	// keptScale turns 16 kHz frames into the 48 kHz frames Opus decodes to.
	keptScale        = 48000 / streamRate
	keptLimitReserve = 1 << 20 // room for the last pages once the limit is reached
)

// AudioHistory is where a session keeps its audio; *store.DB implements
// it.
type AudioHistory interface {
	SaveAudio(ctx context.Context, id int64, a store.Audio) error
}

// keptAudio encodes a session's audio to Ogg Opus as it comes. A nil
// *keptAudio keeps nothing. Only the session's run loop uses it.
type keptAudio struct {
	h        AudioHistory
	w        *audio.OggOpusWriter
	channels int
	log      *slog.Logger

	out    *keptSpool
	zeros  []int16
	frames int64 // frames taken in
	limit  int   // bytes of Ogg past which no more audio is taken
	full   bool  // the limit was reached: what follows is not kept
	err    error // the encoder failed: nothing is kept
}

// newKeptAudio returns a keeper of 16 kHz audio with channels channels
// for h, or nil when keep is false or h cannot keep audio.
func newKeptAudio(keep bool, h any, channels int, log *slog.Logger) (*keptAudio, error) {
	ah, ok := h.(AudioHistory)
	if !keep || !ok || ah == nil {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &keptAudio{h: ah, channels: channels, log: log, limit: store.MaxAudioBytes - keptLimitReserve, out: newKeptSpool(log)}
	w, err := audio.NewOggOpusWriter(k.out, streamRate, channels, keptBitRate*channels)
	if err != nil {
		k.out.close()
		return nil, fmt.Errorf("keep audio: %w", err)
	}
	k.w = w
	return k, nil
}

// add keeps interleaved pcm; silent keeps its length but not its sound
// (audio that was muted, and never sent).
func (k *keptAudio) add(pcm []int16, silent bool) {
	if k == nil || k.full || k.err != nil {
		return
	}
	if silent {
		k.silence(int64(len(pcm) / k.channels))
		return
	}
	k.take(pcm)
}

// silence keeps n frames of silence.
func (k *keptAudio) silence(n int64) {
	if k == nil {
		return
	}
	const chunk = streamRate / 10
	if k.zeros == nil {
		k.zeros = make([]int16, chunk*k.channels)
	}
	for n > 0 && !k.full && k.err == nil {
		m := min(n, chunk)
		k.take(k.zeros[:m*int64(k.channels)])
		n -= m
	}
}

func (k *keptAudio) take(pcm []int16) {
	k.frames += int64(len(pcm) / k.channels)
	if err := k.w.Write(pcm); err != nil {
		k.err = err
		return
	}
	if k.out.n >= int64(k.limit) {
		// The first part is kept; the rest would pass what history
		// takes for one session.
		k.full = true
		k.log.Warn("sessions: the kept audio reached its limit; the rest is not kept", "bytes", k.out.n)
	}
}

// Duration is the length of the audio kept so far.
func (k *keptAudio) Duration() time.Duration {
	if k == nil {
		return 0
	}
	return audio.FramesDuration(k.frames, streamRate)
}

// bytes ends the stream and returns the whole Ogg Opus file, read from
// its spool, or nil when no audio was taken.
func (k *keptAudio) bytes() ([]byte, error) {
	if k.err != nil {
		return nil, k.err
	}
	if k.frames == 0 {
		return nil, nil
	}
	if err := k.w.Close(); err != nil {
		k.err = err
		return nil, err
	}
	data, err := k.out.bytes()
	if err != nil {
		k.err = fmt.Errorf("keep audio: %w", err)
		return nil, k.err
	}
	return data, nil
}

// save keeps the audio with the session's record; a failure is reported
// like any other of the record. The spool is let go either way.
func (k *keptAudio) save(rec *record) {
	if k == nil {
		return
	}
	defer k.close()
	if rec == nil {
		return
	}
	data, err := k.bytes()
	if err == nil && data == nil {
		return // nothing was heard
	}
	rec.saveOnce(context.Background(), "the audio", func(ctx context.Context, id int64) error {
		if err != nil {
			return err
		}
		return k.h.SaveAudio(ctx, id, store.Audio{ContentType: KeptContentType, Encoding: KeptEncoding, SampleRate: streamRate, Data: data})
	})
}

// close lets the spool go, keeping nothing more; a keeper that is not
// saved is closed. It may be called more than once, and on nil.
func (k *keptAudio) close() {
	if k == nil {
		return
	}
	k.out.close()
	k.full = true
}

// keptSpool holds a keeper's Ogg stream as it is encoded: in a temporary
// file without a name (removed as soon as it is made, so that nothing is
// left behind however the app ends, and the disk space is freed when it
// is closed), in the user's cache folder, else the system's temporary
// one. Where no such file can be made (a read-only disk; a system that
// cannot remove an open file), it is held in memory. Only the keeper's
// goroutine uses it.
type keptSpool struct {
	f   *os.File // nil: in mem
	mem bytes.Buffer
	n   int64 // bytes written
}

// newKeptSpool makes a spool, on the disk if it can.
func newKeptSpool(log *slog.Logger) *keptSpool {
	var dirs []string
	if dir, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, dir)
	}
	var errs []error
	for _, dir := range append(dirs, os.TempDir()) {
		f, err := os.CreateTemp(dir, ".earshot-audio-*.ogg")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			_ = os.Remove(f.Name())
			errs = append(errs, err)
			continue
		}
		return &keptSpool{f: f}
	}
	log.Info("sessions: the kept audio is held in memory", "err", errors.Join(errs...))
	return &keptSpool{}
}

func (s *keptSpool) Write(p []byte) (int, error) {
	var (
		n   int
		err error
	)
	switch {
	case s.f != nil:
		n, err = s.f.Write(p)
	default:
		n, err = s.mem.Write(p)
	}
	s.n += int64(n)
	return n, err
}

// bytes reads what was written, whole.
func (s *keptSpool) bytes() ([]byte, error) {
	if s.f == nil {
		return s.mem.Bytes(), nil
	}
	b := make([]byte, s.n)
	if _, err := s.f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// close frees what the spool holds.
func (s *keptSpool) close() {
	if s.f != nil {
		s.f.Close()
	}
	s.mem = bytes.Buffer{}
}

// keepFileAudio keeps the audio of a file transcribed: the file decoded
// to 16 kHz mono, so that it plays and runs again even once the file is
// moved. A file longer than history takes keeps its first part (some 24
// hours). A file this build cannot decode keeps nothing, and is only
// logged: its transcript is whole, and the file itself still plays
// elsewhere.
func keepFileAudio(ctx context.Context, path string, h any, rec *record, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k, err := newKeptAudio(true, h, 1, log)
	defer k.close()
	if k == nil || rec == nil {
		return
	}
	if err == nil {
		err = decodeInto(ctx, path, k)
	}
	if errors.Is(err, audio.ErrUndecodable) {
		log.Info("sessions: the file's audio is not kept: it cannot be decoded here", "err", err)
		return
	}
	if ctx.Err() != nil {
		return // stopped: the transcript is what was asked for
	}
	if err != nil {
		rec.saveOnce(ctx, "the audio", func(context.Context, int64) error { return err })
		return
	}
	k.save(rec)
}

// decodeInto decodes the file at path into k.
func decodeInto(ctx context.Context, path string, k *keptAudio) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := audio.NewSpeechDecoder(audio.Format{})
	if err != nil {
		return err
	}
	defer d.Close()
	buf := make([]byte, 64<<10)
	for !k.full {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := f.Read(buf)
		if n > 0 {
			pcm, err := d.Decode(buf[:n])
			if err != nil {
				return err
			}
			k.add(pcm, false)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	pcm, err := d.Flush()
	if err != nil {
		return err
	}
	k.add(pcm, false)
	return k.err
}

// KeptAudio is the audio kept with a session, ready to play: 16-bit mono
// at SampleRate (a meeting's channels mixed), its sample n at second
// n/SampleRate of the session's transcript. Kept Ogg Opus (what sessions
// keep) stays compressed and is decoded as it plays, from the point
// asked for, so that a long recording costs its 11 MB an hour, not the
// 115 MB of its samples; other kept audio (the WAV of a synthesis) is
// short and decoded whole.
type KeptAudio struct {
	SampleRate int
	ogg        *audio.OggOpusIndex // nil: pcm holds the audio
	pcm        []int16
}

// Duration is the audio's length.
func (a *KeptAudio) Duration() time.Duration {
	switch {
	case a == nil || a.SampleRate <= 0:
		return 0
	case a.ogg != nil:
		return a.ogg.Duration()
	}
	return audio.FramesDuration(int64(len(a.pcm)), a.SampleRate)
}

// Samples decodes the whole audio, for short audio and tests; playing
// decodes as it goes (PlayKept).
func (a *KeptAudio) Samples(ctx context.Context) ([]int16, error) {
	var out []int16
	next := a.from(0)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pcm, err := next()
		out = append(out, pcm...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// keptChunk is how much compressed audio is decoded at a time: about
// 20 s of kept Opus.
const keptChunk = 64 << 10

// from returns the audio from at on, a piece at a time, io.EOF after the
// last.
func (a *KeptAudio) from(at time.Duration) pcmSource {
	if a.ogg == nil {
		first := min(int(int64(at)*int64(a.SampleRate)/int64(time.Second)), len(a.pcm))
		return pcmSlice(a.pcm[first:])
	}
	d, rest, err := a.ogg.SpeechFrom(at)
	if err != nil {
		return func() ([]int16, error) { return nil, err }
	}
	var ended bool
	return func() ([]int16, error) {
		if ended {
			return nil, io.EOF
		}
		for len(rest) > 0 {
			n := min(len(rest), keptChunk)
			pcm, err := d.Decode(rest[:n])
			rest = rest[n:]
			if err != nil {
				d.Close()
				ended = true
				return nil, err
			}
			if len(pcm) > 0 {
				return pcm, nil
			}
		}
		ended = true
		pcm, err := d.Flush()
		d.Close()
		if err == nil {
			err = io.EOF
		}
		return pcm, err
	}
}

// SessionAudio reads the audio kept with session id for playing. A
// session without audio is store.ErrNotFound.
func (w *Workspace) SessionAudio(ctx context.Context, id int64) (*KeptAudio, error) {
	a, err := w.cfg.History.Audio(ctx, id)
	if err != nil {
		return nil, err
	}
	kept := &KeptAudio{SampleRate: audio.SpeechRate}
	if a.ContentType == KeptContentType && a.Encoding == KeptEncoding {
		if kept.ogg, err = audio.IndexOggOpus(a.Data); err == nil {
			return kept, nil
		}
	}
	if kept.pcm, err = decodeKept(ctx, a); err != nil {
		return nil, fmt.Errorf("the session's audio cannot be read: %w", err)
	}
	return kept, nil
}

// decodeKept decodes kept audio (the WAV of a synthesis or an agent
// conversation, or older kept audio) to 16 kHz mono.
func decodeKept(ctx context.Context, a store.Audio) ([]int16, error) {
	d, err := audio.NewSpeechDecoder(audio.Format{}) // every kept audio is in a container

	if err != nil {
		return nil, err
	}
	defer d.Close()
	var out []int16
	const step = 64 << 10
	for data := a.Data; len(data) > 0; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(len(data), step)
		pcm, err := d.Decode(data[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, pcm...)
		data = data[n:]
	}
	pcm, err := d.Flush()
	if err != nil {
		return nil, err
	}
	return append(out, pcm...), nil
}

// PlayKept plays kept audio from at on the speaker of the settings, in
// the background, decoding it as it plays; ctx bounds the playing. It
// needs no service: kept audio plays offline.
func (w *Workspace) PlayKept(ctx context.Context, a *KeptAudio, at time.Duration) (*Playing, error) {
	s, err := w.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return playFrom(ctx, w.cfg.Speakers, s.OutputDevice, a.from(at), a.SampleRate, max(a.Duration()-at, 0))
}
