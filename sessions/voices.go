package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/internal/sayable"
	"github.com/earshot-app/earshot/internal/textseg"
	"github.com/earshot-app/earshot/store"
)

// VoiceFamily says which endpoint serves a voice: general voices (aura)
// speak on /v1/speak, turn-based voices (flux) on /v2/speak. The two are
// never mixed.
type VoiceFamily string

// Voice families.
const (
	FamilyGeneral VoiceFamily = "general" // aura-* and aura-2-*, /v1/speak
	FamilyTurn    VoiceFamily = "turn"    // flux-{voice}-{language}, /v2/speak
)

// FamilyOf returns the family of a voice name, and false for a name that
// is no voice.
func FamilyOf(name string) (VoiceFamily, bool) {
	switch {
	case api.IsAuraVoice(name):
		return FamilyGeneral, true
	case api.IsFluxVoice(name):
		return FamilyTurn, true
	}
	return "", false
}

// Voice is a voice the service offers, with what a picker filters on.
type Voice struct {
	// Name is the model name to ask for ("aura-2-thalia-en").
	Name string
	// Label is the short name ("thalia").
	Label  string
	Family VoiceFamily
	// Language is the ISO 639-1 code spoken ("en"); Accent describes the
	// voice ("American"), "" when the service does not say.
	Language string
	Accent   string
	// Tags are the service's descriptions (gender, "turn-based", ...).
	Tags []string
	// Engine names the synthesiser behind a local engine's voice.
	Engine string
}

// VoicesOf returns the voices of a model list, general then turn-based,
// each family sorted by language then name. A flux voice is never listed
// as a general one, nor an aura voice as turn-based.
func VoicesOf(list *api.ModelList) []Voice {
	if list == nil {
		return nil
	}
	var out []Voice
	add := func(models []api.TTSModel, fam VoiceFamily) {
		start := len(out)
		seen := map[string]bool{}
		for _, m := range models {
			name := m.CanonicalName
			if name == "" {
				name = m.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			v := Voice{Name: name, Label: m.Name, Family: fam, Language: api.VoiceLanguage(name), Engine: m.Engine}
			if v.Label == "" || v.Label == name {
				v.Label = shortVoiceName(name)
			}
			if m.Metadata != nil {
				v.Accent = m.Metadata.Accent
				v.Tags = slices.Clone(m.Metadata.Tags)
			}
			out = append(out, v)
		}
		slices.SortFunc(out[start:], func(a, b Voice) int {
			if c := strings.Compare(a.Language, b.Language); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
	add(list.SpeakVoices(), FamilyGeneral)
	add(list.TurnVoices(), FamilyTurn)
	return out
}

// shortVoiceName is the voice part of a model name: "thalia" of
// aura-2-thalia-en.
func shortVoiceName(name string) string {
	s := strings.TrimSuffix(name, "-"+api.VoiceLanguage(name))
	return s[strings.LastIndexByte(s, '-')+1:]
}

// SpeedRange is how a voice's speed may be set.
type SpeedRange struct {
	// Adjustable is false when the voice speaks at its own pace only;
	// Why then says so in plain words.
	Adjustable bool
	Why        string
	Min, Max   float64
	// Step is the smallest change, 0 for any.
	Step float64
}

// SpeedRangeOf returns the speeds a voice takes: aura-2 voices in English
// and Spanish 0.7 to 1.5; other general voices none; turn-based voices
// 0.5 to 1.5 in steps of 0.05.
func SpeedRangeOf(name string) SpeedRange {
	fam, _ := FamilyOf(name)
	switch {
	case fam == FamilyTurn:
		return SpeedRange{Adjustable: true, Min: api.MinSpeakV2Speed, Max: api.MaxSpeakV2Speed, Step: api.SpeakV2SpeedStep}
	case api.SpeedAvailable(name):
		return SpeedRange{Adjustable: true, Min: api.MinSpeakSpeed, Max: api.MaxSpeakSpeed, Step: 0.05}
	}
	return SpeedRange{Min: 1, Max: 1, Why: "Only aura-2 voices in English and Spanish, and turn-based voices, can change their speed."}
}

// Expressive reports whether a voice takes an expressivity: turn-based
// voices only.
func Expressive(name string) bool {
	fam, _ := FamilyOf(name)
	return fam == FamilyTurn
}

// MaxSynthesisChars bounds the text of one synthesis. Longer text is
// split into requests the service takes (MaxSpeakChars on /v1/speak,
// one turn per paragraph or sentence on /v2/speak), up to this bound.
const MaxSynthesisChars = 20000

// ErrInvalidSynthesis is matched by every refusal of a synthesis request
// before anything is sent; the error's text says why in plain words.
var ErrInvalidSynthesis = errors.New("the synthesis request is not valid")

// invalid returns an error matching ErrInvalidSynthesis that reads msg.
func invalid(format string, args ...any) error {
	return &synthesisError{msg: fmt.Sprintf(format, args...)}
}

type synthesisError struct{ msg string }

func (e *synthesisError) Error() string        { return e.msg }
func (e *synthesisError) Is(target error) bool { return target == ErrInvalidSynthesis }

// SynthesisRequest is one synthesis: text in a voice.
type SynthesisRequest struct {
	Text string
	// Voice is a general (aura) or turn-based (flux) voice name.
	Voice string
	// Speed is 1 (or 0) for the voice's own pace; see SpeedRangeOf.
	Speed float64
	// Expressivity is -2 to 2, turn-based voices only; 0 is the voice's
	// nominal delivery.
	Expressivity int
	// TurnByTurn speaks a turn-based voice one turn per paragraph (or,
	// for a single paragraph, per sentence), each with its own state.
	TurnByTurn bool
	// Silent keeps the audio without playing it.
	Silent bool
}

// Family returns the family of the request's voice.
func (r SynthesisRequest) Family() VoiceFamily {
	f, _ := FamilyOf(r.Voice)
	return f
}

// speedSet reports whether the request asks for a speed other than the
// voice's own.
func (r SynthesisRequest) speedSet() bool { return r.Speed != 0 && r.Speed != 1 }

// Check applies the rules of the voice's endpoint to the request, before
// anything is sent: some text, not too long; a known voice; a speed in
// the voice's range; an expressivity only for turn-based voices, in
// range; turn by turn only for turn-based voices. Errors match
// ErrInvalidSynthesis and read plainly.
func (r SynthesisRequest) Check() error {
	text := strings.TrimSpace(r.Text)
	if text == "" {
		return invalid("There is no text to speak: type or paste some first.")
	}
	if n := utf8.RuneCountInString(r.Text); n > MaxSynthesisChars {
		return invalid("The text is %d characters long; one synthesis takes at most %d.", n, MaxSynthesisChars)
	}
	if strings.ContainsRune(r.Text, utf8.RuneError) && !utf8.ValidString(r.Text) {
		return invalid("The text is not valid UTF-8.")
	}
	fam, ok := FamilyOf(r.Voice)
	if !ok {
		if r.Voice == "" {
			return invalid("Choose a voice first.")
		}
		return invalid("%q is not a voice the service speaks with: choose an aura or flux voice.", r.Voice)
	}
	if rep := r.sayable(); rep.Nothing() {
		advice := "Choose a voice of the text's language, if the service has one."
		if len(rep.Skipped) == 1 && rep.Skipped[0].Name == sayable.Emoji {
			advice = "Voices say words, not emoji."
		}
		return invalid("%s speaks %s, and this text has nothing it can say: only %s. %s", r.Voice, sayable.LanguageName(rep.Language), rep, advice)
	}
	if math.IsNaN(r.Speed) || math.IsInf(r.Speed, 0) || r.Speed < 0 {
		return invalid("The speed %v is not a number the service takes.", r.Speed)
	}
	sr := SpeedRangeOf(r.Voice)
	if r.speedSet() {
		if !sr.Adjustable {
			return invalid("%s speaks at its own pace only (speed 1). %s", r.Voice, sr.Why)
		}
		if r.Speed < sr.Min-1e-9 || r.Speed > sr.Max+1e-9 {
			return invalid("The speed of %s goes from %g to %g, not %g.", r.Voice, sr.Min, sr.Max, r.Speed)
		}
		if fam == FamilyTurn {
			if err := api.CheckSpeakV2Speed(r.Speed); err != nil {
				return invalid("The speed of a turn-based voice moves in steps of 0.05: %g is not one.", r.Speed)
			}
		}
	}
	if fam == FamilyGeneral {
		if r.Expressivity != 0 {
			return invalid("Expressivity is for turn-based (flux) voices only; %s has none.", r.Voice)
		}
		if r.TurnByTurn {
			return invalid("Speaking turn by turn needs a turn-based (flux) voice.")
		}
	}
	if r.Expressivity < api.MinExpressivity || r.Expressivity > api.MaxExpressivity {
		return invalid("Expressivity goes from %d to %d, not %d.", api.MinExpressivity, api.MaxExpressivity, r.Expressivity)
	}
	return nil
}

// sayable reads the text for the request's voice, whose language is the
// last part of its name.
func (r SynthesisRequest) sayable() sayable.Report {
	return sayable.Check(api.VoiceLanguage(r.Voice), r.Text)
}

// SplitTurns splits text into the turns of a turn-by-turn synthesis: one
// per paragraph (blank lines between), or, when there is one paragraph,
// one per sentence. Turns are trimmed and never empty.
func SplitTurns(text string) []string {
	paras := textseg.Paragraphs(text)
	if len(paras) == 1 {
		return SplitSentences(text)
	}
	var out []string
	for _, p := range paras {
		out = append(out, strings.Join(strings.Fields(text[p.Start:p.End]), " "))
	}
	return out
}

// SplitSentences splits text into its sentences, as textseg finds them
// (abbreviations, initials and decimals end none). Sentences are trimmed,
// never empty and have their white space folded; joined with single
// spaces they give the text with its white space folded.
func SplitSentences(text string) []string {
	var spans []textseg.Span
	for _, s := range textseg.Sentences(text) {
		if n := len(spans); n > 0 && spans[n-1].End == s.Start {
			// No white space between (after a CJK full stop): joined
			// with a space, the two would gain one.
			spans[n-1].End = s.End
			continue
		}
		spans = append(spans, s)
	}
	var out []string
	for _, s := range spans {
		out = append(out, strings.Join(strings.Fields(text[s.Start:s.End]), " "))
	}
	return out
}

// chunkText splits text into pieces of at most max characters, as many
// whole sentences to a piece as fit, a longer sentence cut at clause ends,
// else at spaces, else anywhere. Joined, the pieces give the text with its
// white space folded.
func chunkText(text string, max int) []string {
	var out []string
	for _, c := range textseg.Chunks(text, max) {
		out = append(out, strings.Join(strings.Fields(text[c.Start:c.End]), " "))
	}
	return out
}

// VoiceHistory is where syntheses are saved and read back; *store.DB
// implements it.
type VoiceHistory interface {
	RecordHistory
	SaveResponse(ctx context.Context, id int64, body []byte, transcript string) error
	SaveAudio(ctx context.Context, id int64, a store.Audio) error
	Sessions(ctx context.Context, f store.Filter) ([]store.Session, error)
	Session(ctx context.Context, id int64) (store.Session, error)
	Response(ctx context.Context, id int64) ([]byte, error)
	Audio(ctx context.Context, id int64) (store.Audio, error)
	DeleteSession(ctx context.Context, id int64) error
}

// VoicesConfig is what Voices is built from.
type VoicesConfig struct {
	// Streamer opens the speak streams; ClientStreamer adapts *api.Client.
	Streamer SpeakStreamer
	// Inspector, when not nil, keeps a synthesis's wire events with its
	// history entry.
	Inspector *Inspector
	// Models lists the service's models, for the voice list.
	Models func(ctx context.Context) (*api.ModelList, error)
	// Speakers plays the audio; nil means no playback (every synthesis
	// is silent).
	Speakers Speakers
	// OutputDevice names the speaker; "" is the system's default.
	OutputDevice string
	// History, when set, receives every synthesis with its audio.
	History VoiceHistory
	// Backend names the service in history.
	Backend string
	Logger  *slog.Logger
	// Clock times the syntheses; nil is the real clock.
	Clock Clock
}

// Voices is the voice playground: the voices the service offers, and
// syntheses of text with them, played as they stream in and kept. It is
// safe for concurrent use; each Synthesis is its own session.
type Voices struct {
	cfg VoicesConfig
	log *slog.Logger
}

// NewVoices returns a playground over cfg.
func NewVoices(cfg VoicesConfig) *Voices {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Voices{cfg: cfg, log: log}
}

// List returns the voices the service offers (see VoicesOf).
func (v *Voices) List(ctx context.Context) ([]Voice, error) {
	if v.cfg.Models == nil {
		return nil, errors.New("voices: no model list")
	}
	list, err := v.cfg.Models(ctx)
	if err != nil {
		return nil, err
	}
	return VoicesOf(list), nil
}

// Filter returns the voices of a language ("" for any) and accent (""
// for any).
func Filter(voices []Voice, language, accent string) []Voice {
	var out []Voice
	for _, v := range voices {
		if (language == "" || v.Language == language) && (accent == "" || v.Accent == accent) {
			out = append(out, v)
		}
	}
	return out
}
