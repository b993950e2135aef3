package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
)

const speakSummary = "speak text with a voice of the service, to the speaker or a file"

// maxSpeakInput bounds the text read from standard input.
const maxSpeakInput = 1 << 20

// speakFlags are the command line of speak.
type speakFlags struct {
	out          string
	model        string
	speed        float64
	expressivity int
	encoding     string
	turns        bool
	args         []string
}

func newSpeakFlags(env Env) (*flag.FlagSet, *speakFlags) {
	f := &speakFlags{}
	fs := flag.NewFlagSet("speak", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(&f.out, "o", "", "write the audio to `FILE` instead of playing it; its extension chooses the format (.mp3, .wav, .ogg, .flac, .aac)")
	fs.StringVar(&f.model, "model", "", "the `VOICE`: aura-* or aura-2-* (/v1/speak), flux-* (/v2/speak) (default: the one in Settings)")
	fs.Float64Var(&f.speed, "speed", 1, "speaking rate `S`: 0.7 to 1.5 for aura-2 voices in English and Spanish, 0.5 to 1.5 in steps of 0.05 for flux voices")
	fs.IntVar(&f.expressivity, "expressivity", 0, "`E` from -2 (flat) to 2 (lively), flux voices only")
	fs.StringVar(&f.encoding, "encoding", "", "the format of -o: "+strings.Join(sessions.SaveEncodings, ", ")+" (default: from the file's extension)")
	fs.BoolVar(&f.turns, "turns", false, "with a flux voice, speak one turn per paragraph (or sentence)")
	fs.Usage = func() {
		w := env.Stderr
		fmt.Fprint(w, `Usage: earshot speak "TEXT" [-o FILE] [--model VOICE] [--speed S] [--expressivity E] [--encoding ENC] [--turns]
       earshot speak - [flags]     (reads the text from standard input)

Speaks text with a voice of the service chosen in the app's Settings,
streaming: general voices (aura) on /v1/speak, turn-based voices (flux)
on /v2/speak. Without -o the audio plays on the default speaker as it
arrives. On a terminal, the time to first audio is printed. Every run is
saved to the app's history.

Flags:
`)
		fs.PrintDefaults()
	}
	return fs, f
}

// parse reads args, allowing flags after the text.
func (f *speakFlags) parse(fs *flag.FlagSet, args []string) error {
	var err error
	f.args, err = parseInterleaved(fs, args)
	return err
}

// check reports a mistake in the flags, and returns the encoding of -o.
func (f *speakFlags) check() (string, error) {
	switch {
	case len(f.args) == 0:
		return "", errors.New(`what to say? give the text in quotes, or "-" to read it from standard input`)
	case len(f.args) > 1:
		return "", fmt.Errorf("one text at a time: put it in quotes (got %d arguments)", len(f.args))
	case f.encoding != "" && f.out == "":
		return "", errors.New("--encoding chooses the format of -o FILE; the speaker plays as it is")
	}
	if f.out == "" {
		return "", nil
	}
	if f.encoding != "" {
		if !slices.Contains(sessions.SaveEncodings, f.encoding) {
			return "", fmt.Errorf("--encoding %q: use one of %s", f.encoding, strings.Join(sessions.SaveEncodings, ", "))
		}
		return f.encoding, nil
	}
	enc, ok := sessions.EncodingForPath(f.out)
	if !ok {
		return "", fmt.Errorf("cannot tell the format of %q from its extension: use .mp3, .wav, .ogg, .flac or .aac, or --encoding", f.out)
	}
	return enc, nil
}

func speak(ctx context.Context, env Env, args []string) error {
	fs, f := newSpeakFlags(env)
	if err := f.parse(fs, args); err != nil {
		return errUsage
	}
	enc, err := f.check()
	if err != nil {
		fmt.Fprintf(env.Stderr, "earshot speak: %v\n\nRun 'earshot speak -h' for help.\n", err)
		return errUsage
	}
	text := f.args[0]
	if text == "-" {
		in := env.Stdin
		if in == nil {
			in = os.Stdin
		}
		b, err := io.ReadAll(io.LimitReader(in, maxSpeakInput+1))
		if err != nil {
			return fmt.Errorf("read the text: %w", err)
		}
		if len(b) > maxSpeakInput {
			return fmt.Errorf("the text on standard input is longer than %d bytes", maxSpeakInput)
		}
		text = string(b)
	}
	ws, err := env.workspace(ctx, "speak")
	if err != nil {
		return err
	}
	defer ws.Close()
	s, err := ws.Settings(ctx)
	if err != nil {
		return fmt.Errorf("read the settings: %w", err)
	}
	req := sessions.SynthesisRequest{Text: text, Voice: f.model, Speed: f.speed, Expressivity: f.expressivity, TurnByTurn: f.turns, Silent: f.out != ""}
	if req.Voice == "" {
		req.Voice = s.Voice
	}
	if err := req.Check(); err != nil {
		fmt.Fprintf(env.Stderr, "earshot speak: %v\n", err)
		return errUsage
	}
	voices, err := ws.Voices(ctx)
	if err != nil {
		return err
	}
	return speakWith(ctx, env, voices, req, f.out, enc)
}

// speakWith runs one synthesis until its audio has played (or has all
// arrived, with a file), or ctx is cancelled (Ctrl+C), which stops it.
func speakWith(ctx context.Context, env Env, voices *sessions.Voices, req sessions.SynthesisRequest, out, enc string) error {
	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	began := time.Now()
	syn, err := voices.Synthesize(context.WithoutCancel(ctx), req)
	if err != nil {
		return err
	}
	_, stopped := stopper(ctx, syn.Done(), syn.Stop)
	term := env.isTerminal(env.Stderr)
	var hist historyWatch
	for ev := range syn.Events() {
		hist.take(ev)
		switch e := ev.(type) {
		case *sessions.FirstAudioEvent:
			if term {
				status.clear()
				fmt.Fprintf(env.Stderr, "Time to first audio: %d ms\n", e.TimeToFirstAudio.Milliseconds())
			}
		case *sessions.PlaybackStartedEvent:
			if term {
				status.clear()
				fmt.Fprintf(env.Stderr, "Playback started %d ms after the first audio.\n", e.Latency.Milliseconds())
			}
		case *sessions.SpeakWarningEvent:
			status.clear()
			fmt.Fprintf(env.Stderr, "Warning from the service: %s (%s)\n", e.Description, e.Code)
		case *sessions.TextSkippedEvent:
			status.clear()
			fmt.Fprintf(env.Stderr, "%s does not say %s; it says the rest.\n", e.Voice, e.Skipped)
		case *sessions.SpeakRetryEvent:
			status.clear()
			fmt.Fprintf(env.Stderr, "The service asked to slow down: part %d of %d goes again in %.0f s.\n", e.Part, e.Parts, e.Wait.Seconds())
		case *sessions.NoSpeakerEvent:
			req.Silent = true // the progress shows what arrives
		case *sessions.SynthesisProgressEvent:
			if req.Silent {
				status.set(fmt.Sprintf("Received %.1f s of audio...", e.Received.Seconds()))
			} else {
				status.set(fmt.Sprintf("Playing %.1f of %.1f s...", e.Played.Seconds(), e.Received.Seconds()))
			}
		case *sessions.SpeechTurnEvent:
			if e.Turn.State == sessions.TurnInterrupted {
				status.clear()
				fmt.Fprintf(env.Stderr, "Interrupted: spoken %q, left %q\n", strings.TrimSpace(e.Turn.Spoken), strings.TrimSpace(e.Turn.Remaining))
			}
		}
	}
	runErr := <-stopped
	status.clear()
	res := syn.Result()
	if runErr != nil && res.Partial == nil {
		return runErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if out != "" {
		var buf bytes.Buffer
		if err := sessions.EncodeAudio(ctx, &buf, res.PCM, res.SampleRate, enc); err != nil {
			return err
		}
		if err := writeOutput(env, out, buf.Bytes()); err != nil {
			return fmt.Errorf("write the audio: %w", err)
		}
		if out != "-" {
			fmt.Fprintf(env.Stderr, "Wrote %s (%s, %.1f s, %s).\n", out, enc, res.Duration().Seconds(), byteSize(int64(buf.Len())))
		}
	}
	if res.Partial != nil {
		// What was spoken is kept (in the file, and in history, when it
		// had room, as partial); the run did not do what it was asked.
		return reword(runErr, "%s", res.Partial.Error())
	}
	saved, unsaved := hist.end()
	if res.Unplayed != nil {
		return reword(res.Unplayed, "nothing was played: %s. The %.1f s of audio are %s; write them to a file with -o FILE",
			deviceProblem(res.Unplayed), res.Duration().Seconds(), saved)
	}
	if term {
		fmt.Fprintf(env.Stderr, "Spoke %.1f s with %s in %.1f s; %s.\n", res.Duration().Seconds(), req.Voice, time.Since(began).Seconds(), saved)
	}
	return unsaved
}

// deviceProblem says in a few words what is wrong with a sound device:
// the audio layer's own plain-words error, without miniaudio's detail.
func deviceProblem(err error) string {
	for _, known := range []error{device.ErrNoOutputDevice, device.ErrOutputUnavailable, device.ErrOutputStopped,
		device.ErrNoAudioBackend, device.ErrNoDevice, device.ErrDeviceUnavailable, device.ErrPermissionDenied, device.ErrDeviceStopped} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return "the speaker could not be opened"
}
