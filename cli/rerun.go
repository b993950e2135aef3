package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

const rerunSummary = "run a history entry's audio again on another model or service, and compare"

func rerun(ctx context.Context, env Env, args []string) error {
	var (
		model, backend, region, language string
		smartFormat, diarize, asJSON     bool
	)
	fs := flag.NewFlagSet("rerun", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&model, "model", "", "the `MODEL` to ask for (default: the entry's, else the one in Settings)")
	fs.StringVar(&backend, "backend", "", "`local|hosted`: the engine built in, or the hosted service (default: the one in Settings)")
	fs.StringVar(&region, "region", "", "the hosted service's `REGION`: global, eu, au or in")
	fs.StringVar(&language, "language", "", "the `LANGUAGE` to ask for (default: the entry's)")
	fs.BoolVar(&smartFormat, "smart-format", false, "ask for smart formatting (default: as the entry did)")
	fs.BoolVar(&diarize, "diarize", false, "ask who speaks when (default: as the entry did)")
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: earshot rerun ID [--model M] [--backend local|hosted] [--region R] [--json]

Runs the audio of a history entry (kept with it, or the file it was
transcribed from) again as a file transcription, saves the new result to
history, and prints both transcripts, the words that changed as a diff
([-old-]{+new+}), the word error rate of the new one against the
original, and how long each took. 'earshot history' lists the IDs.

Flags:
`)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return errUsage
	}
	usageErr := usageError(env, "rerun")
	if len(pos) != 1 {
		return usageErr("give the ID of one history entry ('earshot history' lists them)")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return usageErr("%q is not an entry's ID: give the number 'earshot history' shows", pos[0])
	}
	switch backend {
	case "", sessions.BackendLocal, sessions.BackendHosted:
	default:
		return usageErr("--backend is local or hosted, not %q", backend)
	}
	if region != "" && backend == sessions.BackendLocal {
		return usageErr("--region is for the hosted service, not the local engine")
	}
	ws, err := env.historyWorkspace(ctx, "run an entry again")
	if err != nil {
		return err
	}
	defer ws.Close()
	// What the entry was transcribed with, but for what the flags say.
	entry, err := ws.History.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return reword(err, "there is no history entry %d ('earshot history' lists them)", id)
	}
	if err != nil {
		return err
	}
	opts := sessions.RerunDefaults(entry)
	opts.Backend, opts.Region = backend, region
	if model != "" {
		opts.Model = model
	}
	if language != "" {
		opts.Language = language
	}
	if flagSet(fs, "smart-format") {
		opts.SmartFormat = smartFormat
	}
	if flagSet(fs, "diarize") {
		opts.Diarize = diarize
	}

	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	status.set("Sending the audio…")
	res, err := ws.Rerun(ctx, id, opts, func(p sessions.Progress) {
		switch p.Phase {
		case sessions.PhaseUploading, sessions.PhaseDecoding:
			status.set(fmt.Sprintf("Sending the audio… %.0f%%", 100*p.Fraction()))
		case sessions.PhaseTranscribing:
			status.set("Transcribing…")
		}
	})
	status.clear()
	if errors.Is(err, store.ErrNotFound) {
		return reword(err, "there is no history entry %d ('earshot history' lists them)", id)
	}
	if res == nil {
		return err
	}
	// A result history could not keep is still printed; the failure to
	// keep it is the command's error.
	if asJSON {
		return errors.Join(writeRerunJSON(env, res), err)
	}
	return errors.Join(writeRerunText(env, res), err)
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// writeRerunText prints the comparison for people.
func writeRerunText(env Env, res *sessions.RerunResult) error {
	o, n := res.Original, res.New
	w := env.Stdout
	again := fmt.Sprintf("run again as entry %d", n.SessionID)
	if n.SessionID == 0 {
		again = "run again (not saved to history)"
	}
	fmt.Fprintf(w, "%s (entry %d), %s.\n\n", quoted(o.Title), o.SessionID, again)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\tOriginal\tRe-run\n")
	fmt.Fprintf(tw, "Service\t%s\t%s\n", orDash(o.Backend), orDash(n.Backend))
	fmt.Fprintf(tw, "Model\t%s\t%s\n", modelWords(o), modelWords(n))
	fmt.Fprintf(tw, "Took\t%s\t%s\n", tookWords(o), tookWords(n))
	fmt.Fprintf(tw, "Audio\t%s\t%s\n", seconds(o.Audio), seconds(n.Audio))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nOriginal: %s\nRe-run:   %s\n\nDiff: %s\n\n", orDash(o.Transcript), orDash(n.Transcript), orDash(res.Diff.Inline()))
	d := res.Diff
	if d.RefWords == 0 {
		// A rate against no words is no measure.
		fmt.Fprintf(w, "Word error rate: none, as the original has no words (the re-run has %d).\n", len(strings.Fields(n.Transcript)))
		return nil
	}
	fmt.Fprintf(w, "Word error rate of the re-run against the original: %.1f%% (%s, %s, %s in %s)\n",
		100*res.WER, count.Of(d.Substitutions, "substitution"), count.Of(d.Deletions, "deletion"),
		count.Of(d.Insertions, "insertion"), count.Of(d.RefWords, "word"))
	return nil
}

func quoted(s string) string { return "“" + s + "”" }

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// modelWords names the model asked for and the one that answered.
func modelWords(s sessions.RerunSide) string {
	asked := s.Model
	if asked == "" {
		asked = "default"
	}
	if s.ModelName != "" && s.ModelName != asked {
		return asked + " (" + s.ModelName + ")"
	}
	return asked
}

// tookWords says how long a side took, and what that time is.
func tookWords(s sessions.RerunSide) string {
	switch {
	case s.Took <= 0:
		return "-"
	case s.Live:
		return fmt.Sprintf("%.1f s live", s.Took.Seconds())
	}
	return fmt.Sprintf("%.2f s", s.Took.Seconds())
}

func seconds(s float64) string {
	if s <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f s", s)
}

// rerunJSON is what --json prints.
type rerunJSON struct {
	Original      rerunSideJSON `json:"original"`
	New           rerunSideJSON `json:"rerun"`
	WER           float64       `json:"wer"`
	Words         int           `json:"reference_words"`
	Substitutions int           `json:"substitutions"`
	Deletions     int           `json:"deletions"`
	Insertions    int           `json:"insertions"`
	Diff          []diffOpJSON  `json:"diff"`
}

type rerunSideJSON struct {
	ID         int64   `json:"id"`
	Title      string  `json:"title"`
	Kind       string  `json:"kind"`
	Backend    string  `json:"backend"`
	Model      string  `json:"model"`
	ModelName  string  `json:"model_name,omitempty"`
	Transcript string  `json:"transcript"`
	Seconds    float64 `json:"took_seconds"`
	Live       bool    `json:"live"`
	Audio      float64 `json:"audio_seconds"`
}

type diffOpJSON struct {
	Op  string `json:"op"`
	Ref string `json:"original,omitempty"`
	Hyp string `json:"rerun,omitempty"`
}

func sideJSON(s sessions.RerunSide) rerunSideJSON {
	return rerunSideJSON{ID: s.SessionID, Title: s.Title, Kind: s.Kind, Backend: s.Backend, Model: s.Model, ModelName: s.ModelName,
		Transcript: s.Transcript, Seconds: s.Took.Round(time.Millisecond).Seconds(), Live: s.Live, Audio: s.Audio}
}

func writeRerunJSON(env Env, res *sessions.RerunResult) error {
	d := res.Diff
	out := rerunJSON{Original: sideJSON(res.Original), New: sideJSON(res.New), WER: res.WER, Words: d.RefWords,
		Substitutions: d.Substitutions, Deletions: d.Deletions, Insertions: d.Insertions, Diff: []diffOpJSON{}}
	for _, op := range d.Ops {
		out.Diff = append(out.Diff, diffOpJSON{Op: op.Kind.String(), Ref: op.Ref, Hyp: op.Hyp})
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
