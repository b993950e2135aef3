package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	CreateSession(ctx context.Context, s store.Session) (int64, error)
	SaveResponse(ctx context.Context, sessionID int64, body []byte, transcript string) error
	FinishSession(ctx context.Context, id int64, ended time.Time, duration float64, status, errText string) error
}

// Phase is the stage of a file transcription.
type Phase int

// Phases of a file transcription.
const (
	PhaseUploading    Phase = iota + 1 // bytes are going out
	PhaseTranscribing                  // all sent; the service is working
	PhaseDone
)

// Progress reports a file transcription's advance. Sent and Total are
// bytes of the file.
type Progress struct {
	Phase       Phase
	Sent, Total int64
}

// Fraction is the share of the upload done, 0 to 1.
func (p Progress) Fraction() float64 {
	if p.Total <= 0 {
		return 0
	}
	return float64(p.Sent) / float64(p.Total)
}

// FileResult is a finished file transcription.
type FileResult struct {
	SessionID int64
	Response  *api.ListenResponse
}

// FileTranscription transcribes audio files in batch and saves each to
// history. It is safe for concurrent use; each call is independent.
type FileTranscription struct {
	Client  Transcriber
	History FileHistory
	// Backend names the service for history.
	Backend string
}

// Transcribe uploads the file at path with opts, reporting progress (which
// may be nil) from the calling goroutine's point of view: progress is
// called on the goroutine doing the upload, so it must not block.
// Cancelling ctx stops the upload; the session is then saved as cancelled.
func (f *FileTranscription) Transcribe(ctx context.Context, path string, opts api.ListenOptions, progress func(Progress)) (*FileResult, error) {
	if err := opts.CheckRequest(api.Batch); err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not an audio file", filepath.Base(path))
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	var id int64
	if f.History != nil {
		optJSON, _ := json.Marshal(opts.Query())
		id, err = f.History.CreateSession(ctx, store.Session{
			Kind:    store.KindFile,
			Title:   filepath.Base(path),
			Source:  path,
			Backend: f.Backend,
			Model:   opts.Model,
			Options: string(optJSON),
			Started: time.Now(),
			Status:  store.StatusRunning,
		})
		if err != nil {
			return nil, fmt.Errorf("save the session: %w", err)
		}
	}
	total := info.Size()
	cr := &countingReader{r: file, total: total, report: progress}
	progress(Progress{Phase: PhaseUploading, Total: total})
	resp, err := f.Client.Transcribe(ctx, cr, contentTypeOf(path), opts)
	if err != nil {
		status := store.StatusFailed
		if ctx.Err() != nil {
			status = store.StatusCancelled
		}
		f.finish(id, 0, status, err)
		return nil, err
	}
	progress(Progress{Phase: PhaseDone, Sent: total, Total: total})
	if f.History != nil {
		body, _ := json.Marshal(resp)
		if err := f.History.SaveResponse(context.WithoutCancel(ctx), id, body, resp.Transcript()); err != nil {
			err = fmt.Errorf("save the transcript: %w", err)
			f.finish(id, resp.Metadata.Duration, store.StatusFailed, err) // not left running
			return nil, err
		}
	}
	f.finish(id, resp.Metadata.Duration, store.StatusDone, nil)
	return &FileResult{SessionID: id, Response: resp}, nil
}

func (f *FileTranscription) finish(id int64, duration float64, status string, err error) {
	if f.History == nil || id == 0 {
		return
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	_ = f.History.FinishSession(context.Background(), id, time.Now(), duration, status, msg)
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

// countingReader reports how much of a file has been read.
type countingReader struct {
	r      io.Reader
	total  int64
	sent   int64
	report func(Progress)
	mu     sync.Mutex
	last   time.Time
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	c.sent += int64(n)
	sent := c.sent
	now := time.Now()
	due := now.Sub(c.last) >= 50*time.Millisecond || errors.Is(err, io.EOF)
	if due {
		c.last = now
	}
	c.mu.Unlock()
	if due {
		phase := PhaseUploading
		if errors.Is(err, io.EOF) || sent >= c.total {
			phase = PhaseTranscribing
		}
		c.report(Progress{Phase: phase, Sent: sent, Total: c.total})
	}
	return n, err
}
