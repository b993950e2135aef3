package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/store"
)

// Transcriber sends a file to batch transcription; *api.Client implements it.
type Transcriber interface {
	Transcribe(ctx context.Context, audio io.Reader, contentType string, opts api.ListenOptions) (*api.ListenResponse, error)
}

// FileHistory is where file transcriptions are saved; *store.DB implements it.
type FileHistory interface {
	RecordHistory
	SaveResponse(ctx context.Context, sessionID int64, body []byte, transcript string) error
}

// Phase is the stage of a file transcription.
type Phase int

// Phases of a file transcription, in the order they come.
const (
	// PhaseReading is the file being opened and examined: what a view
	// shows while Start runs.
	PhaseReading Phase = iota + 1
	// PhaseUploading is the file's bytes going out, as they are.
	PhaseUploading
	// PhaseDecoding is a file being decoded here and sent as it is
	// decoded (MP4, WebM, ...; see FileAudio).
	PhaseDecoding
	// PhaseTranscribing is all sent: waiting for the service's result.
	PhaseTranscribing
	PhaseDone
)

// Progress reports a file transcription's advance. Sent is the bytes
// sent so far, and Total the bytes to send: the file's size, or 0 when
// the file is decoded as it is sent. Decoded and Length, for a file
// decoded here, are the audio decoded (and sent) so far and the file's
// length, 0 when it does not say.
type Progress struct {
	Phase           Phase
	Sent, Total     int64
	Decoded, Length time.Duration
}

// Fraction is the share of the sending done, 0 to 1 (0 when unknown).
func (p Progress) Fraction() float64 {
	switch {
	case p.Total > 0:
		return min(float64(p.Sent)/float64(p.Total), 1)
	case p.Length > 0:
		return min(float64(p.Decoded)/float64(p.Length), 1)
	}
	return 0
}

// FileResult is a finished file transcription.
type FileResult struct {
	SessionID int64
	Response  *api.ListenResponse
	// History is what history holds of it, as the session's final
	// HistoryEvent says.
	History Keeping
}

// FileProgressEvent reports how far a file transcription has come: the
// bytes uploaded, then that the service is working, then done.
type FileProgressEvent struct{ Progress Progress }

// FileDoneEvent carries the finished transcription; it is the last event
// of a session that succeeded.
type FileDoneEvent struct{ Result *FileResult }

func (*FileProgressEvent) isEvent() {}
func (*FileDoneEvent) isEvent()     {}

// FileTranscription transcribes audio files in batch and saves each to
// history. Its fields are set before use and never change; it is safe for
// concurrent use, each session independent.
type FileTranscription struct {
	Client  Transcriber
	History FileHistory
	// Backend names the service for history.
	Backend string
	// Logger receives what could not be saved; nil discards it.
	Logger *slog.Logger
	// Clock times the sessions (history, progress); nil is the real clock.
	Clock Clock
	// KeepAudio keeps each file's audio, decoded, with its transcript in
	// History, which must also be an AudioHistory (see keepFileAudio).
	KeepAudio bool
}

// FileTranscriptionSession is one audio file sent to batch
// transcription. Its events are *FileProgressEvent while the file
// uploads and the service works, a *SaveFailedEvent when history could
// not keep the result, a final *HistoryEvent, and *FileDoneEvent with
// the result, last; then the channel closes. Stop, or cancelling Start's
// context, cancels the upload: the session is saved as cancelled and Err
// matches context.Canceled.
//
// Start, Stop, Events, Done, Err and SessionID are safe for concurrent
// use. Events must be read until it is closed.
type FileTranscriptionSession struct {
	*lifecycle
	f     FileTranscription
	path  string
	opts  api.ListenOptions
	id    atomic.Int64
	about FileAudio // set by Start
}

// Session returns a session transcribing the file at path with opts;
// Start starts it.
func (f *FileTranscription) Session(path string, opts api.ListenOptions) *FileTranscriptionSession {
	return &FileTranscriptionSession{
		lifecycle: newLifecycle("file transcription", f.Clock),
		f:         *f,
		path:      path,
		opts:      opts,
	}
}

// SessionID returns the session's id in history, once Start has
// returned (0 without history).
func (s *FileTranscriptionSession) SessionID() int64 { return s.id.Load() }

// Audio describes what the session sends, once Start has returned.
func (s *FileTranscriptionSession) Audio() FileAudio { return s.about }

// Start checks the options and the file, records the session in history
// (or, on a full disk, holds its entry until there is room) and starts
// the upload in the background. A file that cannot be read, is empty or
// has no audio track, or options the service would refuse, fail Start,
// and nothing is saved; a history that cannot keep the session does not.
// ctx bounds the whole session:
// cancelling it stops the session like Stop.
func (s *FileTranscriptionSession) Start(ctx context.Context) error { return s.start(ctx, s.prepare) }

func (s *FileTranscriptionSession) prepare(ctx context.Context) (runFunc, error) {
	if s.f.Client == nil {
		return nil, errors.New("file transcription: a client is needed")
	}
	if err := s.opts.CheckRequest(api.Batch); err != nil {
		return nil, err
	}
	up, err := openFileUpload(ctx, s.path)
	if err != nil {
		return nil, err
	}
	s.about = up.about
	optJSON, _ := json.Marshal(s.opts.Query())
	rec := openRecord(ctx, fileRecordHistory(s.f.History), store.Session{
		Kind:    store.KindFile,
		Title:   filepath.Base(s.path),
		Source:  s.path,
		Backend: s.f.Backend,
		Model:   s.opts.Model,
		Options: string(optJSON),
	}, s.clock, s.f.Logger, lateID(s.emit, s.id.Store))
	s.id.Store(rec.ID())
	return func(ctx context.Context) error {
		defer up.close()
		return s.run(ctx, up, rec)
	}, nil
}

// run sends the file, then saves the response and finishes the record.
func (s *FileTranscriptionSession) run(ctx context.Context, up *upload, rec *record) error {
	ctx, cancel := untilStopped(ctx, s.stopping())
	defer cancel()
	report := func(p Progress) { s.emit(&FileProgressEvent{Progress: p}) }
	// A decoded file keeps the audio it sends; a file sent as it is is
	// decoded for keeping once its transcript is saved.
	var keep *keptAudio
	if s.f.KeepAudio && up.decoding() {
		keep, _ = newKeptAudio(true, s.f.History, 1, s.f.Logger)
		defer keep.close()
	}
	report(up.progress(0, false))
	body, err := up.start(ctx, keep)
	if err != nil {
		rec.finish(endStatus(ctx), 0, err)
		return err
	}
	cr := &countingReader{r: body, clock: s.clock, progress: up.progress, report: report}
	resp, err := s.f.Client.Transcribe(rec.wire(ctx), cr, up.contentType, s.opts)
	// The transport may still hold the body: no report after this one.
	cr.stop()
	up.close()
	if err != nil {
		rec.finish(endStatus(ctx), 0, err)
		return err
	}
	done := up.progress(cr.count(), true)
	done.Phase = PhaseDone
	report(done)
	saved := rec.save(ctx, "the transcript", func(ctx context.Context, id int64) error {
		body, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		return s.f.History.SaveResponse(ctx, id, body, resp.Transcript())
	})
	if saved && s.f.KeepAudio {
		if up.decoding() {
			keep.save(rec)
		} else {
			keepFileAudio(ctx, s.path, s.f.History, rec, s.f.Logger)
		}
	}
	finishSaved(rec, saved, resp.Metadata.Duration)
	s.emit(&FileDoneEvent{Result: &FileResult{SessionID: rec.ID(), Response: resp, History: rec.keeping()}})
	return nil
}

// Wait reads the events of a started session until the channel closes,
// handing each progress report to progress (which may be nil), and
// returns the result, or why the session failed. When the transcript
// could not be saved to history, Wait returns the result with the
// *SaveFailedEvent as its error. It is the synchronous form of the
// session, for callers that have nothing else to show.
func (s *FileTranscriptionSession) Wait(progress func(Progress)) (*FileResult, error) {
	var (
		res     *FileResult
		unsaved error
	)
	for ev := range s.Events() {
		switch ev := ev.(type) {
		case *FileProgressEvent:
			if progress != nil {
				progress(ev.Progress)
			}
		case *SaveFailedEvent:
			if unsaved == nil {
				unsaved = ev
			}
		case *FileDoneEvent:
			res = ev.Result
		}
	}
	<-s.Done()
	if err := s.Err(); err != nil {
		return nil, err
	}
	return res, unsaved
}

// fileRecordHistory keeps a nil FileHistory nil as a RecordHistory.
func fileRecordHistory(h FileHistory) RecordHistory {
	if h == nil {
		return nil
	}
	return h
}

// untilStopped returns ctx, cancelled as well once stop is closed: the
// work of a run that a Stop cancels.
func untilStopped(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// endStatus is the status of a session whose work failed under ctx:
// cancelled when ctx was (by Stop or by the caller), else failed.
func endStatus(ctx context.Context) string {
	if ctx.Err() != nil {
		return store.StatusCancelled
	}
	return store.StatusFailed
}

// finishSaved finishes the record of a session whose work succeeded:
// done when its result was saved (or, held for room, is now), else
// failed with why, so that history never lists as done a session it
// holds no result of.
func finishSaved(rec *record, saved bool, duration float64) {
	if saved || rec.written(context.Background()) {
		rec.finish(store.StatusDone, duration, nil)
		return
	}
	rec.finish(store.StatusFailed, duration, rec.failed)
}

// contentTypeOf guesses a MIME type from a file's extension; the service
// detects the format from the bytes either way.
func contentTypeOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".wav":
		return "audio/wav"
	case ".mp3":
		return "audio/mpeg"
	case ".flac":
		return "audio/flac"
	case ".ogg", ".oga", ".opus":
		return "audio/ogg"
	}
	if t := mime.TypeByExtension(ext); strings.HasPrefix(t, "audio/") || strings.HasPrefix(t, "video/") {
		return t
	}
	return "application/octet-stream"
}

// countingReader reports how the sending goes, from the bytes read of
// the body (progress says where that stands), at most every 50 ms and at
// the end, until stop.
type countingReader struct {
	r        io.Reader
	clock    Clock
	progress func(sent int64, ended bool) Progress
	report   func(Progress)

	mu      sync.Mutex // guards sent, last, stopped; held while reporting, so stop waits for a report under way
	sent    int64
	last    time.Time
	stopped bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent += int64(n)
	now := c.clock.Now()
	ended := errors.Is(err, io.EOF)
	if c.stopped || now.Sub(c.last) < 50*time.Millisecond && !ended {
		return n, err
	}
	c.last = now
	c.report(c.progress(c.sent, ended))
	return n, err
}

// count is the bytes read so far.
func (c *countingReader) count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

// stop ends the reports; none is under way once it returns.
func (c *countingReader) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
}
