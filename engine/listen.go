package engine

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/diarize"
	"github.com/earshot-app/earshot/engine/entity"
	"github.com/earshot-app/earshot/engine/format"
	"github.com/earshot-app/earshot/engine/sphinx"
)

// listenPlan is a /v1/listen request, checked and resolved into what the
// engine will do.
type listenPlan struct {
	opts api.ListenOptions
	mode api.Mode

	// format is the raw audio format; Encoding none means "detect the
	// container".
	format audio.Format

	diarize        bool
	diarizeVersion diarize.Version
	// entities is set when entities must be found: to report them or to
	// redact them.
	entities bool
	redact   entity.Policy
	// weight is what the request takes of the concurrency allowance on top
	// of the connection itself.
	weight int
	// postSpeech is the silence, in frames, that ends an utterance.
	postSpeech int
	// speechFinal reports whether an utterance's end marks speech_final
	// (false with endpointing=false).
	speechFinal bool
}

const msgNoSuchModel = "No such model/version combination found."

// notOfferedParams are parameters of /v1/listen the engine does not
// implement; a request that sets one is refused in plain words rather than
// answered as if it had been honoured.
var notOfferedParams = []struct {
	name string
	set  func(*api.ListenOptions) bool
}{
	{"detect_language", func(o *api.ListenOptions) bool { return o.DetectLanguage }},
	{"keyterm", func(o *api.ListenOptions) bool { return len(o.Keyterm) > 0 }},
	{"keywords", func(o *api.ListenOptions) bool { return len(o.Keywords) > 0 }},
	{"search", func(o *api.ListenOptions) bool { return len(o.Search) > 0 }},
	{"replace", func(o *api.ListenOptions) bool { return len(o.Replace) > 0 }},
	{"dictation", func(o *api.ListenOptions) bool { return o.Dictation }},
	{"measurements", func(o *api.ListenOptions) bool { return o.Measurements }},
	{"filler_words", func(o *api.ListenOptions) bool { return o.FillerWords }},
	{"profanity_filter", func(o *api.ListenOptions) bool { return o.ProfanityFilter }},
	{"callback", func(o *api.ListenOptions) bool { return o.Callback != "" || o.CallbackMethod != "" }},
}

// planListen reads and checks a /v1/listen query. Every refusal is an
// *api.OptionError with the status, code and message to answer.
func (e *Engine) planListen(q url.Values, mode api.Mode) (*listenPlan, error) {
	o, unknown, err := api.ParseListenQuery(q)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 {
		e.log.Debug("ignored unknown listen parameters", "params", unknown)
	}
	if err := o.Validate(mode); err != nil {
		return nil, err
	}
	if err := (api.Endpoint{Region: e.cfg.Region}).CheckModel(o.Model); err != nil {
		return nil, err
	}
	p := &listenPlan{opts: o, mode: mode, speechFinal: true, postSpeech: batchPostSpeechFrames}
	if _, ok := resolveListenModel(o.Model); !ok {
		return nil, badRequest(msgNoSuchModel + " The local engine serves " + strings.Join(listenNames, ", ") + ", all with its English recogniser.")
	}
	if o.Version != "" && o.Version != "latest" {
		return nil, badRequest(msgNoSuchModel + " The local engine has one version of its model: latest.")
	}
	if !englishOnly(o.Language) {
		return nil, badRequest(fmt.Sprintf("%s The local engine recognises English only, not %q.", msgNoSuchModel, o.Language))
	}
	for _, f := range notOfferedParams {
		if f.set(&o) {
			return nil, notOffered(f.name)
		}
	}

	switch o.Encoding {
	case "", "flac", "ogg-opus":
		// Containerized: the format is read from the audio.
	case "linear16", "linear32", "mulaw", "alaw":
		enc, err := audio.ParseEncoding(o.Encoding)
		if err != nil {
			return nil, badRequest(err.Error())
		}
		ch := max(o.Channels, 1)
		p.format = audio.Format{Encoding: enc, SampleRate: o.SampleRate, Channels: ch}
		if err := p.format.Validate(); err != nil {
			return nil, badRequest(err.Error())
		}
	default:
		return nil, notOffered("encoding=" + o.Encoding)
	}

	switch {
	case o.DiarizeModel != "":
		parse := diarize.ParseBatch
		if mode == api.Streaming {
			parse = diarize.ParseStreaming
		}
		v, err := parse(o.DiarizeModel)
		if err != nil {
			return nil, badRequest(err.Error())
		}
		p.diarize, p.diarizeVersion = true, v
	case o.Diarize:
		v := diarize.V2
		if mode == api.Streaming {
			v = diarize.V1
		}
		p.diarize, p.diarizeVersion = true, v
	}
	if p.diarize {
		p.weight += weightHeavy
	}

	pol, err := entity.ParsePolicy(o.Redact)
	if err != nil {
		return nil, badRequest(err.Error())
	}
	p.redact = pol
	p.entities = o.DetectEntities || pol.Enabled()

	if mode == api.Streaming {
		p.postSpeech = streamingPostSpeechFrames
		switch {
		case o.Endpointing == api.EndpointingOff:
			p.speechFinal = false
		case o.Endpointing > 0:
			p.postSpeech = sphinx.Config{}.WithEndpointing(msDuration(int(o.Endpointing))).VADPostSpeech
		}
	}
	return p, nil
}

func badRequest(msg string) *api.OptionError {
	return &api.OptionError{Reason: msg, Status: http.StatusBadRequest, Code: api.CodeBadRequest}
}

// wordsOf flattens recogniser results into the service's words, with the
// index of each utterance's last word (the boundaries formatting keeps).
func wordsOf(results []sphinx.Result) (words []api.Word, boundaries []int) {
	for _, r := range results {
		for _, w := range r.Words {
			words = append(words, api.Word{Word: w.Text, Start: round4(w.Start), End: round4(w.End), Confidence: round4(w.Confidence)})
		}
		if n := len(words); n > 0 && (len(boundaries) == 0 || boundaries[len(boundaries)-1] != n-1) {
			boundaries = append(boundaries, n-1)
		}
	}
	return words, boundaries
}

// shaped is one transcript, formatted as the request asked.
type shaped struct {
	alt      api.Alternative
	entities []api.Entity
}

// shape applies entities, redaction and formatting to recognised words.
// withParagraphs adds the paragraphs block (batch only).
func (p *listenPlan) shape(words []api.Word, boundaries []int, withParagraphs bool) shaped {
	var ents []api.Entity
	var reps []format.Replacement
	if p.entities {
		ents = entity.Detect(words, boundaries)
		reps, ents = entity.Redact(ents, p.redact)
	}
	res := format.Apply(words, format.Options{
		Punctuate:   p.opts.Punctuate,
		SmartFormat: p.opts.SmartFormat,
		Numerals:    p.opts.Numerals,
		Boundaries:  boundaries,
		Replace:     reps,
	})
	out := shaped{alt: api.Alternative{
		Transcript: format.Transcript(res.Words),
		Confidence: meanConfidence(res.Words),
		Words:      res.Words,
	}}
	if out.alt.Words == nil {
		out.alt.Words = []api.Word{}
	}
	if p.entities {
		ents = res.RemapEntities(ents)
		if !p.opts.SmartFormat {
			ents = entity.Unformatted(ents)
		}
		if !p.opts.DetectEntities {
			ents = nil // found only to redact them
		} else if ents == nil {
			ents = []api.Entity{}
		}
		out.entities = ents
	}
	if withParagraphs && (p.opts.Paragraphs || p.opts.SmartFormat) && len(res.Words) > 0 {
		pg := format.Paragraphs(res.Words, res.SentenceEnds, format.ParagraphOptions{})
		out.alt.Paragraphs = &pg
	}
	return out
}

func meanConfidence(words []api.Word) float64 {
	if len(words) == 0 {
		return 0
	}
	var sum float64
	for _, w := range words {
		sum += w.Confidence
	}
	return round4(sum / float64(len(words)))
}

// round4 keeps four decimals: times to a tenth of a millisecond, which is
// finer than the recogniser's 10 ms frames, without float noise.
func round4(x float64) float64 {
	const k = 1e4
	if x >= 0 {
		return float64(int64(x*k+0.5)) / k
	}
	return -float64(int64(-x*k+0.5)) / k
}

// errAudio marks audio the engine could not decode.
var errAudio = errors.New("failed to process audio")
