package sessions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/worddiff"
	"github.com/earshot-app/earshot/store"
)

// ErrNoAudio is returned by Rerun for an entry that has no audio kept
// and no file to read it from again.
var ErrNoAudio = errors.New("this entry has no audio to run again")

// RerunOptions says how to run an entry's audio again. The zero value
// runs it with the settings' service and model.
type RerunOptions struct {
	// Model is the model to ask for; "" is the settings' model.
	Model string
	// Backend is BackendLocal or BackendHosted; "" is the settings'
	// backend (a custom address included).
	Backend string
	// Region is the hosted service's region ("" or "global", "eu", ...);
	// with Backend "" the settings' region is used when it is empty.
	Region string
	// Language is the language to ask for; "" is the settings'.
	Language string
	// SmartFormat and Diarize ask for formatting and speakers.
	SmartFormat bool
	Diarize     bool
}

// RerunSide is one of the two results a re-run compares.
type RerunSide struct {
	SessionID int64
	Title     string
	Kind      string // the entry's kind (store.Kind...)
	Backend   string // for people: "Local engine", "Hosted service (European Union)", ...
	Model     string // the model asked for; "" for the service's default
	// ModelName is the model that answered, as its result names it
	// (model_info), or "" when the entry does not say.
	ModelName  string
	Transcript string
	// Took is how long the entry took: for a re-run or a file, from
	// sending the audio to the answer; for a live session (Live), its
	// length, as it was transcribed while it was spoken.
	Took time.Duration
	Live bool
	// Audio is the length of the audio, in seconds, or 0 when unknown.
	Audio float64
}

// RerunResult is an entry and its re-run side by side.
type RerunResult struct {
	Original, New RerunSide
	// Diff aligns the new transcript (hypothesis) against the original
	// (reference), word by word.
	Diff worddiff.Result
	// WER is the word error rate of the new transcript against the
	// original: Diff.WER().
	WER float64
	// History is what history holds of the re-run.
	History Keeping
}

// rerunDetails is the Details JSON of a re-run's history entry.
type rerunDetails struct {
	RerunOf int64 `json:"rerun_of"`
}

// Rerun runs the audio of history entry id again, as a batch
// transcription on the service and model opts choose, saves the result as
// a new file entry whose details name the entry it re-ran ({"rerun_of":
// id}), and returns both results with the word diff, the word error rate
// of the new transcript against the original, and each one's time.
//
// The audio is the entry's kept audio; for a file without it, the file
// itself if it is still there; for a re-run, the audio of what it re-ran.
// Without any, Rerun returns ErrNoAudio. The hosted service without a
// key is ErrNoKey; both before anything is sent. A result history could
// not keep is returned with the *SaveFailedEvent that says why as the
// error (its New.SessionID is 0 when no entry was made). progress, which
// may be nil, hears how the upload goes; it is called on other goroutines
// and must not block.
func (w *Workspace) Rerun(ctx context.Context, id int64, opts RerunOptions, progress func(Progress)) (*RerunResult, error) {
	h := w.cfg.History
	orig, err := h.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	src, err := w.rerunAudio(ctx, orig, 0)
	if err != nil {
		return nil, err
	}
	defer src.close()
	origSide, err := w.rerunOriginal(ctx, orig)
	if err != nil {
		return nil, err
	}

	settings, err := w.Settings(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := w.rerunConnection(settings, opts)
	if err != nil {
		return nil, err
	}
	lo := api.ListenOptions{Model: opts.Model, Language: opts.Language, SmartFormat: opts.SmartFormat, Punctuate: true}
	if lo.Model == "" {
		lo.Model = settings.Model
	}
	if lo.Language == "" {
		lo.Language = settings.Language
	}
	if opts.Diarize {
		lo.DiarizeModel = "latest"
	}
	if err := lo.CheckRequest(api.Batch); err != nil {
		return nil, err
	}

	optJSON, _ := json.Marshal(lo.Query())
	details, _ := json.Marshal(rerunDetails{RerunOf: id})
	rec := openRecord(ctx, w.history(), store.Session{
		Kind:    store.KindFile,
		Title:   rerunTitle(orig.Title),
		Source:  orig.Source,
		Backend: conn.Name,
		Model:   lo.Model,
		Options: string(optJSON),
		Details: string(details),
	}, nil, w.log, nil)
	report := func(Progress) {}
	if progress != nil {
		report = progress
	}
	report(src.progress(0, false))
	began := time.Now()
	body, err := src.start(ctx, nil)
	if err != nil {
		rec.finish(endStatus(ctx), 0, err)
		return nil, err
	}
	cr := &countingReader{r: body, clock: rec.clock, progress: src.progress, report: report}
	resp, err := conn.Client.Transcribe(rec.wire(ctx), cr, src.contentType, lo)
	took := time.Since(began)
	cr.stop()
	src.close()
	if err != nil {
		rec.finish(endStatus(ctx), 0, err)
		return nil, err
	}
	done := src.progress(cr.count(), true)
	done.Phase = PhaseDone
	report(done)
	saved := rec.save(ctx, "the transcript", func(ctx context.Context, id int64) error {
		body, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		return h.SaveResponse(ctx, id, body, resp.Transcript())
	})
	finishSaved(rec, saved, resp.Metadata.Duration)
	// A result history could not keep is still the result: it is
	// returned with why it was not kept.
	var unsaved error
	kept := rec.keeping()
	if kept.Err != nil {
		unsaved = kept.Err
	}
	newSide := RerunSide{
		SessionID:  rec.ID(),
		Title:      rerunTitle(orig.Title),
		Kind:       store.KindFile,
		Backend:    conn.Name,
		Model:      lo.Model,
		ModelName:  modelNameOf(resp),
		Transcript: resp.Transcript(),
		Took:       took,
		Audio:      resp.Metadata.Duration,
	}
	if origSide.Audio == 0 {
		origSide.Audio = newSide.Audio
	}
	diff := worddiff.Compare(origSide.Transcript, newSide.Transcript)
	return &RerunResult{Original: origSide, New: newSide, Diff: diff, WER: diff.WER(), History: kept}, unsaved
}

// rerunTitle names a re-run's entry.
func rerunTitle(title string) string {
	const prefix = "Re-run of "
	title = strings.TrimPrefix(title, prefix)
	if title == "" {
		title = "an entry"
	}
	return prefix + title
}

// maxRerunChain bounds how far back a re-run of a re-run looks for audio.
const maxRerunChain = 8

// rerunAudio finds the audio of entry s: kept with it, its file, or the
// audio of the entry it re-ran.
func (w *Workspace) rerunAudio(ctx context.Context, s store.Session, depth int) (*upload, error) {
	a, err := w.cfg.History.Audio(ctx, s.ID)
	if err == nil {
		return bytesUpload(s.Title, bytes.NewReader(a.Data), int64(len(a.Data)), a.ContentType), nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if s.Kind != store.KindFile {
		return nil, ErrNoAudio
	}
	var d rerunDetails
	if s.Details != "" && json.Unmarshal([]byte(s.Details), &d) == nil && d.RerunOf > 0 && depth < maxRerunChain {
		of, err := w.cfg.History.Session(ctx, d.RerunOf)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrNoAudio
		}
		if err != nil {
			return nil, err
		}
		return w.rerunAudio(ctx, of, depth+1)
	}
	if s.Source == "" || !filepath.IsAbs(s.Source) {
		return nil, ErrNoAudio
	}
	up, err := openFileUpload(ctx, s.Source)
	var fe *FileError
	switch {
	case errors.As(err, &fe) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrFolder)):
		// The file is gone, or is no longer one: there is no audio.
		return nil, fmt.Errorf("%w: %w", ErrNoAudio, err)
	case err != nil:
		return nil, err
	}
	return up, nil
}

// rerunOriginal reads what entry s heard, and how long it took.
func (w *Workspace) rerunOriginal(ctx context.Context, s store.Session) (RerunSide, error) {
	side := RerunSide{SessionID: s.ID, Title: s.Title, Kind: s.Kind, Backend: s.Backend, Model: s.Model, Audio: s.Duration}
	if !s.Ended.IsZero() && s.Ended.After(s.Started) {
		side.Took = s.Ended.Sub(s.Started)
	}
	switch s.Kind {
	case store.KindCaptions, store.KindConversation, store.KindAgent:
		side.Live = true
	}
	switch s.Kind {
	case store.KindFile:
		body, err := w.cfg.History.Response(ctx, s.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return side, err
		}
		if len(body) > 0 {
			var resp api.ListenResponse
			if err := json.Unmarshal(body, &resp); err != nil {
				return side, fmt.Errorf("the saved transcript is damaged: %w", err)
			}
			side.Transcript = resp.Transcript()
			side.ModelName = modelNameOf(&resp)
			if side.Audio == 0 {
				side.Audio = resp.Metadata.Duration
			}
		}
	case store.KindSynthesis:
		// What was spoken is the text it was given.
		text, err := w.cfg.History.ResponseText(ctx, s.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return side, err
		}
		side.Transcript = text
	default:
		t, err := w.Transcript(ctx, s.ID)
		if err != nil {
			return side, err
		}
		var words []string
		for _, c := range t.Captions {
			words = append(words, c.Text)
		}
		side.Transcript = strings.Join(words, " ")
	}
	return side, nil
}

// rerunConnection builds a connection to the service opts choose.
func (w *Workspace) rerunConnection(s store.Settings, opts RerunOptions) (*Connection, error) {
	switch opts.Backend {
	case "":
		if opts.Region != "" {
			s.Region = opts.Region
		}
	case BackendLocal:
		s.Backend = BackendLocal
	case BackendHosted:
		s.Backend, s.Region = BackendHosted, opts.Region
	default:
		return nil, fmt.Errorf("unknown backend %q: local or hosted", opts.Backend)
	}
	if s.Backend == "" {
		s.Backend = BackendLocal
		if key, _, err := w.cfg.Keys.Key(); err == nil && key != "" {
			s.Backend = BackendHosted
		}
	}
	if s.Backend == BackendLocal && opts.Region != "" {
		// A region is the hosted service's: saying nothing of it would
		// run the entry on this machine as if in the region.
		return nil, fmt.Errorf("a region (%s) is the hosted service's, and this re-run is on the local engine: choose the hosted service, or no region", opts.Region)
	}
	var key api.Secret
	if s.Backend != BackendLocal {
		k, _, err := w.cfg.Keys.Key()
		if err != nil {
			return nil, fmt.Errorf("read the API key: %w", err)
		}
		key = k
	}
	return connect(s, key, w.cfg.Local, w.dialer())
}

// modelNameOf is the name of the model that answered, from model_info.
func modelNameOf(r *api.ListenResponse) string {
	if r == nil || len(r.Metadata.Models) == 0 {
		return ""
	}
	return r.Metadata.ModelInfo[r.Metadata.Models[0]].Name
}

// CanRerun reports whether entry id has audio Rerun can send: kept with
// it, its file, or the audio of the entry it re-ran.
func (w *Workspace) CanRerun(ctx context.Context, id int64) (bool, error) {
	s, err := w.cfg.History.Session(ctx, id)
	if err != nil {
		return false, err
	}
	src, err := w.rerunAudio(ctx, s, 0)
	var fe *FileError
	if errors.Is(err, ErrNoAudio) || errors.As(err, &fe) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	src.close()
	return true, nil
}

// RerunDefaults returns the options entry s was transcribed with, as a
// re-run's starting point: its model (when it is one a file can be sent
// to), language, smart formatting and speakers. Backend and Region are
// left to the caller.
func RerunDefaults(s store.Session) RerunOptions {
	var o RerunOptions
	switch s.Kind {
	case store.KindFile, store.KindCaptions:
		o.Model = s.Model
	}
	var q url.Values
	if s.Options == "" || json.Unmarshal([]byte(s.Options), &q) != nil {
		return o
	}
	o.Language = q.Get("language")
	o.SmartFormat = q.Get("smart_format") == "true"
	o.Diarize = q.Get("diarize") == "true" || q.Get("diarize_model") != ""
	return o
}
