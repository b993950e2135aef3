//go:build screenshots

// The screenshots of the README and the app stores (scripts/screenshots)
// are taken of a build with this tag, so that none of what they set up is
// in the app people run.

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gen2brain/malgo"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
	"github.com/earshot-app/earshot/ui"
)

// screenshotSetup prepares a screenshot (see prepare).
type screenshotSetup struct{}

// screenshot is the tab a screenshot is taken of, named by
// EARSHOT_SCREENSHOT; "" when none is asked for.
type screenshot struct {
	tab string
	// pdf is the document the "analyze-pdf" screenshot opens, and
	// analysed is told when its analysis is on screen.
	pdf      string
	analysed func(error)
}

// prepare sets the app up for a screenshot of the tab
// EARSHOT_SCREENSHOT names, as scripts/screenshots asks: the local
// engine, no key, speaker labels on, and for "captions" a real recording
// replayed in real time as the microphone, captioned at once; for
// "conversation" LibriVox lines with pauses between them, replayed in
// real time as the microphone, in a conversation started at once; for
// "overlay" the same captions in the caption overlay; for "inspector"
// the same captions with the wire inspector open on their messages; for
// "meeting"
// the reader at the microphone and the card player in the computer's
// sound, heard both ways; for
// "analyze" a made-up support call pasted and analysed by the local
// engine; for "analyze-pdf" a made-up quarterly report of a bakery,
// typeset as a PDF of four pages by groff, opened in the Analyze tab and
// analysed, its passages linked to their pages; for "voices" a sentence spoken through the null backend; for
// "history" the History tab searching entries of several kinds that the
// local engine made first; for "damaged-history" (the History tab) and
// "readonly-home" (the Captions tab) nothing more: scripts/screenshots
// starts the app on a home it has damaged, and the header says what the
// app did about it.
// "ready" is printed once the tab (for these, the whole recording, the
// analysis or the speech) is on screen. Without EARSHOT_SCREENSHOT the
// app opens as it was configured.
func (screenshotSetup) prepare(ctx context.Context, cfg *sessions.WorkspaceConfig, opts *ui.Options) (appShow, error) {
	shot := screenshot{tab: os.Getenv("EARSHOT_SCREENSHOT")}
	if shot.tab == "" {
		return shot, nil
	}
	if err := setUpScreenshot(ctx, shot.tab, cfg, opts); err != nil {
		return shot, err
	}
	if shot.tab == "analyze-pdf" {
		pdf, err := writeBakeryPDF(ctx)
		if err != nil {
			return shot, err
		}
		shot.pdf, shot.analysed = pdf, readyWith(opts)
	}
	return shot, nil
}

// readyWith makes opts.OnReady wait, as well, for the function it
// returns to be called: both are called on the UI goroutine.
func readyWith(opts *ui.Options) func(error) {
	ready := opts.OnReady
	var loaded, done bool
	var first error
	finish := func(err error) {
		if err != nil && first == nil {
			first = err
		}
		if loaded && done {
			ready(first)
		}
	}
	opts.OnReady = func(err error) { loaded = true; finish(err) }
	return func(err error) { done = true; finish(err) }
}

// show selects the screenshot's tab; for "overlay", the Captions tab,
// with the caption overlay shown over it; for "inspector", the Captions
// tab with the wire inspector's window.
func (s screenshot) show(w *ui.App) error {
	tab := s.tab
	switch tab {
	case "overlay":
		tab = "captions"
		w.ShowOverlay()
	case "meeting":
		tab = "captions"
	case "analyze-pdf":
		tab = ""
		w.AnalyzeDocument(s.pdf, s.analysed)
	case "inspector":
		tab = "captions"
		w.ShowInspector()
		w.InspectMarked(sessions.MarkFirstFinal)
	case "history":
		tab = ""
		if !w.ShowHistorySearch(historyQuery) {
			return fmt.Errorf("no History tab to capture")
		}
	case "damaged-history":
		tab = "history" // the new history, empty, under the notice
	case "readonly-home":
		tab = "captions"
	}
	if tab != "" && !w.SelectTab(tab) {
		return fmt.Errorf("no view named %q to capture", s.tab)
	}
	return nil
}

// setUpScreenshot configures the workspace and the window for a
// screenshot of the tab shot (see screenshotSetup.prepare).
func setUpScreenshot(ctx context.Context, shot string, cfg *sessions.WorkspaceConfig, opts *ui.Options) error {
	cfg.Keys = sessions.NewKeys(&store.Memory{}, nil)
	s := store.DefaultSettings()
	s.Backend, s.Diarize = store.BackendLocal, true
	switch shot {
	case "captions", "overlay", "inspector":
		rec, err := loadRecording(ctx, recordingClips, 0.6, "Recording: a reader and a card player")
		if err != nil {
			return err
		}
		cfg.Microphones = rec
		s.InputDevice = recordingID
		opts.AutoStart = true
	case "meeting":
		// A meeting heard both ways: the reader at the microphone, the
		// card player in the computer's sound.
		rec, err := loadRecording(ctx, recordingClips, 0.6, "Recording: a reader")
		if err != nil {
			return err
		}
		cfg.Microphones = rec.meeting()
		s.InputDevice, s.CaptureSource, s.SystemDevice = recordingID, store.CaptureBoth, meetingSoundID
		opts.AutoStart = true
	case "conversation":
		rec, err := loadRecording(ctx, conversationClips, 1.6, "Recording: a reader, pausing between lines")
		if err != nil {
			return err
		}
		cfg.Microphones = rec
		s.InputDevice = recordingID
		opts.AutoConverse = true
	case "analyze":
		opts.AutoAnalyze = analyzeDocument
	case "agent":
		// A typed conversation with the local engine's agent: its voice
		// plays into miniaudio's null device.
		cfg.Speakers = sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}
		s.Voice = "aura-2-thalia-en"
		opts.AutoAgent = agentMessages
	case "voices":
		// No sound card under the virtual display: the null backend
		// plays in real time into nothing, so the playhead moves.
		cfg.Speakers = sessions.DeviceSpeakers{Backends: []malgo.Backend{device.NullBackend}}
		s.Voice = "aura-2-thalia-en"
		opts.AutoSpeak = voicesText
	}
	if err := cfg.History.SaveSettings(ctx, s); err != nil {
		return err
	}
	if shot == "history" {
		if err := fillHistory(ctx, *cfg); err != nil {
			return err
		}
	}
	opts.OnReady = func(err error) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println("ready")
	}
	return nil
}

// historyQuery is what the history screenshot searches for: a word that
// the reading, the support call and the sentence spoken all hold.
const historyQuery = "and "

// fillHistory gives the history screenshot entries of several kinds,
// made by the local engine before the window opens: live captions of a
// LibriVox reading and the card player, the card player and another
// reading transcribed from their files, the support call analysed, and a
// sentence spoken.
func fillHistory(ctx context.Context, cfg sessions.WorkspaceConfig) error {
	ws, err := sessions.NewWorkspace(cfg)
	if err != nil {
		return err
	}
	// Live captions of the reader and the card player, replayed as fast
	// as the engine takes them: a caption hit shows where it was said.
	rec, err := loadRecording(ctx, recordingClips[:2], 0.6, "Recording: a reader and a card player")
	if err != nil {
		return err
	}
	src, err := audio.NewReplay(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}, rec.samples, audio.ReplayConfig{})
	if err != nil {
		return err
	}
	c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: rec.name})
	if err != nil {
		return fmt.Errorf("the history screenshot's captions: %w", err)
	}
	for range c.Events() {
	}
	<-c.Done()
	if err := c.Err(); err != nil {
		return fmt.Errorf("the history screenshot's captions: %w", err)
	}
	for _, clip := range []string{recordingClips[1], recordingClips[2]} {
		if _, err := ws.TranscribeFile(ctx, speechData+clip, nil); err != nil {
			return fmt.Errorf("the history screenshot's file %s: %w", clip, err)
		}
	}
	if _, err := ws.Analyze(ctx, sessions.AnalysisInput{Text: analyzeDocument}, sessions.AllFeatures(), nil); err != nil {
		return fmt.Errorf("the history screenshot's analysis: %w", err)
	}
	v, err := ws.Voices(ctx)
	if err != nil {
		return fmt.Errorf("the history screenshot's voices: %w", err)
	}
	syn, err := v.Synthesize(ctx, sessions.SynthesisRequest{Text: voicesText, Voice: "aura-2-thalia-en", Silent: true})
	if err != nil {
		return fmt.Errorf("the history screenshot's synthesis: %w", err)
	}
	for range syn.Events() {
	}
	<-syn.Done()
	return nil
}

// analyzeDocument is the analyze screenshot's document: a made-up call
// to a support line, written for Earshot, that turns from content to
// upset and back, with requests along the way.
const analyzeDocument = `Thanks for calling Brightline Internet, my name is Dana. How can I help you today?

Hi Dana, I have been a customer for six years and I have always loved the service. The connection is fast and the support team has been wonderful.

But this month I was charged twice for my subscription, and I am really upset about it. This is the second billing error this year, it is frustrating and honestly unacceptable.

I want to refund the duplicate charge right away. If this keeps happening I will cancel my subscription and switch to another provider.

I completely understand, and I am sorry for the trouble. I can see the duplicate payment on your account, and I have issued the refund, so it will reach your card within three days.

Oh, that is great news, thank you so much. While I have you, could you update my billing address? I moved to a new apartment last week.

Of course. Your new address is saved and the next invoice will go there. Is there anything else I can do for you?

No, that is everything. You have been very helpful, thanks again and have a lovely evening.`

// agentMessages are what the agent screenshot types to the agent.
var agentMessages = []string{"Hello", "Search history for budget", "What is seven times six?", "How many kilometres in five miles?", "Define serendipity", "How do you say cat in French?"}

// voicesText is what the voices screenshot speaks, with the settings'
// voice, through the null backend.
const voicesText = "Welcome to the voice playground. Pick a voice, type some text, and hear it at once: " +
	"playback starts as soon as the first audio arrives."

// The screenshot's recording: real human speech from pocketsphinx's test
// data, a LibriVox reader (Sense and Sensibility) answered by a second
// speaker calling playing cards, so that the captions show two speakers.
const (
	speechData  = "/usr/share/pocketsphinx/test/data/"
	recordingID = "recording"
)

var recordingClips = []string{
	"librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
	"cards/005.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
	"cards/002.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0890.wav",
	"cards/001.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0930.wav",
}

// conversationClips are the conversation screenshot's recording: lines of
// the LibriVox reading, each followed by a pause long enough to end a
// turn.
var conversationClips = []string{
	"librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0880.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0890.wav",
	"librivox/sense_and_sensibility_01_austen_64kb-0930.wav",
}

// recording is a Microphones with one device: the clips, joined by
// pauses and replayed in real time.
type recording struct {
	samples []int16
	name    string
	// clips are where each clip begins and ends in samples.
	clips [][2]int
}

// meetingSoundID is the meeting screenshot's source of the computer's
// sound.
const meetingSoundID = "meeting-speakers"

// meeting splits the recording in two, clip by clip: the first clip and
// every other one on the microphone, the rest in the computer's sound,
// each silent while the other speaks.
func (r recording) meeting() meetingRecording {
	you := append([]int16(nil), r.samples...)
	others := make([]int16, len(r.samples))
	for i, c := range r.clips {
		if i%2 == 1 {
			copy(others[c[0]:c[1]], r.samples[c[0]:c[1]])
			clear(you[c[0]:c[1]])
		}
	}
	return meetingRecording{you: recording{samples: you, name: r.name}, others: others}
}

// meetingRecording is a Microphones with a microphone and a source of the
// computer's sound.
type meetingRecording struct {
	you    recording
	others []int16
}

func (m meetingRecording) Devices(ctx context.Context) ([]device.Device, error) {
	return m.you.Devices(ctx)
}

func (m meetingRecording) SystemDevices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: meetingSoundID, Name: "Sound from Meeting Speakers", Default: true}}, nil
}

func (m meetingRecording) Open(ctx context.Context, id string) (audio.Source, error) {
	if id == meetingSoundID {
		f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
		return audio.NewReplay(f, m.others, audio.ReplayConfig{Paced: true})
	}
	return m.you.Open(ctx, id)
}

// loadRecording joins clips with pause seconds of silence before the
// first and after each, as a microphone named name.
func loadRecording(ctx context.Context, clips []string, pause float64, name string) (recording, error) {
	const rate = 16000
	gap := make([]float32, int(pause*rate))
	all := gap
	var spans [][2]int
	for _, clip := range clips {
		f, err := os.Open(speechData + clip)
		if err != nil {
			return recording{}, fmt.Errorf("the screenshot's recording (pocketsphinx-testdata): %w", err)
		}
		b, err := audio.Decode(ctx, f)
		f.Close()
		if err != nil {
			return recording{}, fmt.Errorf("%s: %w", clip, err)
		}
		if b.SampleRate != rate || b.Channels != 1 {
			return recording{}, fmt.Errorf("%s: %d Hz, %d channels; want 16 kHz mono", clip, b.SampleRate, b.Channels)
		}
		spans = append(spans, [2]int{len(all), len(all) + len(b.Samples)})
		all = append(append(all, b.Samples...), gap...)
	}
	return recording{samples: audio.Float32ToInt16(nil, all), name: name, clips: spans}, nil
}

func (r recording) Devices(context.Context) ([]device.Device, error) {
	return []device.Device{{ID: recordingID, Name: r.name}}, nil
}

func (r recording) Open(context.Context, string) (audio.Source, error) {
	f := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1}
	return audio.NewReplay(f, r.samples, audio.ReplayConfig{Paced: true})
}

// bakeryReport is the analyze-pdf screenshot's document, written for
// Earshot: the quarterly report of a made-up bakery, a heading and its
// paragraphs a page, from good news through trouble to requests.
var bakeryReport = [][]string{
	{"Third quarter at a glance",
		"The Crooked Loaf had its best summer since we opened on Mill Lane. Sales rose by eighteen percent on the same quarter last year, and the Saturday queue now reaches the corner before nine o'clock.",
		"The new sourdough rye has become our most popular loaf, and the café tables outside were full on most sunny afternoons. Customers tell us the cinnamon buns are the best in town, and we are very proud of the whole team.",
		"We welcomed two apprentices in July. Both have settled in well and Priya already shapes the morning baguettes on her own."},
	{"Costs and the oven",
		"Flour and butter cost more again this quarter: flour by nine percent and butter by fourteen. Energy bills were lower than we feared, thanks to the insulation fitted in the spring.",
		"The old deck oven broke down twice in August, and each time we lost a morning's bake. The repairs were expensive and the engineer warns that the heating elements are worn out. It was a stressful month and the early shift was exhausted.",
		"Two wholesale customers paid their invoices late, which left the account uncomfortably low in September."},
	{"What we need to decide",
		"Please approve the purchase of a second-hand rotating rack oven before the Christmas season. The supplier in Leeds can deliver it in November if we order by the end of October.",
		"We also need to raise the price of the large sourdough by twenty pence and to review the wholesale payment terms. Could the partners meet on the fourteenth to agree both?",
		"Finally, we would like to hire a part-time driver for the café deliveries, two mornings a week."},
	{"Looking ahead",
		"The Christmas order book opens on the first of November, with stollen, mince pies and the chocolate yule log that sold out last year.",
		"We will run a bread-making class for children during the half-term holiday, and the village school has asked for a tour of the bakery.",
		"Thank you to everyone who made this such a good summer. We look forward to a busy and happy winter on Mill Lane."},
}

// writeBakeryPDF typesets bakeryReport as a PDF of four pages with groff
// (the ms macros, a page each) in the user's cache folder, which the
// screenshot's fresh home holds, and returns its path.
func writeBakeryPDF(ctx context.Context) (string, error) {
	var ms strings.Builder
	ms.WriteString(".pdfinfo /Title The Crooked Loaf: third quarter report\n.nr PS 11p\n.nr VS 14p\n")
	ms.WriteString(".TL\nThe Crooked Loaf\n.AU\nQuarterly report, July to September\n")
	for i, page := range bakeryReport {
		if i > 0 {
			ms.WriteString(".bp\n")
		}
		ms.WriteString(".SH\n" + page[0] + "\n")
		for _, p := range page[1:] {
			ms.WriteString(".PP\n" + p + "\n")
		}
	}
	cmd := exec.CommandContext(ctx, "groff", "-k", "-ms", "-Tpdf", "-dpaper=a4", "-P-pa4")
	cmd.Stdin = strings.NewReader(ms.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pdf, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("the analyze-pdf screenshot's PDF (groff, scripts/setup installs it): %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "earshot-screenshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "crooked-loaf-q3.pdf")
	return path, os.WriteFile(path, pdf, 0o600)
}
