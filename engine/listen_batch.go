package engine

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/diarize"
	"github.com/earshot-app/earshot/engine/format"
	"github.com/earshot-app/earshot/engine/intel"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/internal/textseg"
)

// Limits of batch transcription.
const (
	maxBatchBytes  = 1 << 30 // the largest upload or fetched file
	fetchTimeout   = 2 * time.Minute
	createdLayout  = "2006-01-02T15:04:05.000Z"
	transactionKey = "deprecated"
)

// handleListenBatch serves POST /v1/listen: audio in the body, or a JSON
// body {"url": ...} naming audio to fetch.
func (e *Engine) handleListenBatch(w http.ResponseWriter, r *http.Request) {
	plan, err := e.planListen(r.URL.Query(), api.Batch)
	if err == nil {
		err = checkListenIntelligence(&plan.opts)
	}
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	if plan.weight > 0 {
		if !e.limit.acquire(plan.weight) {
			e.tooMany(w, r)
			return
		}
		defer e.limit.release(plan.weight)
	}
	ctx := r.Context()
	body, closeBody, err := e.batchBody(ctx, w, r)
	if err != nil {
		writeBatchError(w, r, err)
		return
	}
	defer closeBody()
	sum := sha256.New()
	in, err := plan.decode(ctx, io.TeeReader(body, sum), e.cfg.MaxAudioDuration, e.channelSinks(plan))
	if in != nil {
		defer in.release()
	}
	if err != nil && !errors.Is(err, errRecognition) {
		writeBatchError(w, r, err)
		return
	}
	var resp *api.ListenResponse
	if err == nil {
		resp, err = e.transcribeAudio(ctx, plan, in, sum, requestID(ctx))
	}
	if err != nil {
		if ctx.Err() != nil {
			return // the client went away
		}
		e.log.Error("batch transcription failed", "request_id", requestID(ctx), "err", err)
		writeError(w, r, http.StatusInternalServerError, api.CodeInternalServerError, "The transcription failed: "+err.Error())
		return
	}
	model, _ := resolveListenModel(plan.opts.Model)
	noteAudio(ctx, resp.Metadata.Duration, resp.Metadata.Channels, model)
	writeJSON(w, http.StatusOK, resp)
}

// errRemote marks a URL body that could not be fetched.
var errRemote = errors.New("remote content")

// batchBody returns the audio of a batch request: the body itself, or
// what a JSON {"url": ...} body points to.
func (e *Engine) batchBody(ctx context.Context, w http.ResponseWriter, r *http.Request) (io.Reader, func(), error) {
	body := http.MaxBytesReader(w, r.Body, maxBatchBytes)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		return body, func() {}, nil
	}
	var req struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&req); err != nil {
		return nil, nil, fmt.Errorf("%w: the JSON body must be {\"url\": \"...\"}: %v", errPayload, err)
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, fmt.Errorf("%w: %q is not an http or https URL", errPayload, req.URL)
	}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	greq, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%w: %v", errPayload, err)
	}
	resp, err := http.DefaultClient.Do(greq)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("%w: could not fetch %s: %v", errRemote, u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, nil, fmt.Errorf("%w: fetching %s answered %s", errRemote, u.Redacted(), resp.Status)
	}
	lr := &io.LimitedReader{R: resp.Body, N: maxBatchBytes + 1}
	return &limitErrReader{lr}, func() { resp.Body.Close(); cancel() }, nil
}

// errTooLong marks audio longer than the engine accepts.
var errTooLong = errors.New("the audio is too long")

// tooLongError is audio longer than the engine accepts. It matches
// errTooLong.
type tooLongError struct {
	max time.Duration // the longest audio accepted
}

// detail says why the audio is refused.
func (e *tooLongError) detail() string {
	return fmt.Sprintf("it is longer than the local engine accepts (%v)", e.max)
}

func (e *tooLongError) Error() string        { return errTooLong.Error() + ": " + e.detail() }
func (e *tooLongError) Is(target error) bool { return target == errTooLong }

// errPayload marks a request body the engine cannot read.
var errPayload = errors.New("payload")

// limitErrReader turns running past the limit into a too-large error.
type limitErrReader struct{ lr *io.LimitedReader }

func (l *limitErrReader) Read(p []byte) (int, error) {
	n, err := l.lr.Read(p)
	if l.lr.N <= 0 {
		return n, &http.MaxBytesError{Limit: maxBatchBytes}
	}
	return n, err
}

// decoded is the audio of a batch request, at the recogniser's rate.
type decoded struct {
	// channels is where the 16 kHz audio went: one mix of every
	// channel, or, with multichannel, one per channel.
	channels []*channelAudio
	info     audio.Info
	// seconds is the duration of the audio as sent.
	seconds float64
}

// release gives back the decoders the channels still hold.
func (d *decoded) release() {
	for _, c := range d.channels {
		c.release()
	}
}

// errRecognition marks a failure of the recogniser (not of the audio)
// while the audio was decoded.
var errRecognition = errors.New("recognition failed")

// channelAudio is where one channel of a batch request's audio goes as
// it is decoded: into a recogniser's stream, so that nothing of the audio
// is held however long it is, or into memory, for what reads the whole
// recording (speaker labels; the channels of a multichannel request,
// recognised one after the other).
type channelAudio struct {
	stream *sphinx.Stream // nil: held in pcm
	done   func()         // gives the stream's decoder back
	finals []sphinx.Result
	pcm    []int16
}

// push takes the next samples of the channel.
func (c *channelAudio) push(pcm []int16) error {
	if c.stream == nil {
		c.pcm = append(c.pcm, pcm...)
		return nil
	}
	evs, err := c.stream.Push(pcm)
	if err != nil {
		return fmt.Errorf("%w: recognise: %w", errRecognition, err)
	}
	c.collect(evs)
	return nil
}

// end ends a recognised channel: the last utterance's result comes.
func (c *channelAudio) end() error {
	if c.stream == nil {
		return nil
	}
	evs, err := c.stream.End()
	if err != nil {
		return fmt.Errorf("%w: recognise: %w", errRecognition, err)
	}
	c.collect(evs)
	c.release()
	return nil
}

func (c *channelAudio) collect(evs []sphinx.Event) {
	for _, ev := range evs {
		if ev.Kind == sphinx.Final {
			c.finals = append(c.finals, ev.Result)
		}
	}
}

// release closes the stream and gives its decoder back, once.
func (c *channelAudio) release() {
	if c.stream != nil {
		_ = c.stream.Close()
		c.stream = nil
		c.done()
	}
}

// channelSinks returns how a batch request's audio of n channels (as the
// plan takes them) goes: recognised as it comes when it is one channel
// and no speaker labels are asked for, else held.
func (e *Engine) channelSinks(plan *listenPlan) func(ctx context.Context, n int) ([]*channelAudio, error) {
	return func(ctx context.Context, n int) ([]*channelAudio, error) {
		out := make([]*channelAudio, n)
		for i := range out {
			out[i] = &channelAudio{}
		}
		if n != 1 || plan.diarize {
			return out, nil
		}
		dec, release, err := e.recognizerFor(listenModelFor(plan.opts.Model)).decoder(ctx, plan.postSpeech)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errRecognition, err)
		}
		st, err := dec.NewStream(sphinx.StreamOptions{})
		if err != nil {
			release()
			return nil, fmt.Errorf("%w: %w", errRecognition, err)
		}
		out[0].stream, out[0].done = st, release
		return out, nil
	}
}

// decode reads the audio of a batch request and converts it to 16 kHz as
// it goes, handing each channel's samples to the channel's sink, which
// open makes once the audio's layout is known: a long recording at a
// high rate costs, at most, memory at 16 kHz. Audio longer than
// maxDuration is refused. A failure of a sink matches errRecognition;
// the decoded value returned with an error, if any, must be released.
func (p *listenPlan) decode(ctx context.Context, r io.Reader, maxDuration time.Duration, open func(ctx context.Context, n int) ([]*channelAudio, error)) (*decoded, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(12)
	if len(head) == 0 {
		return nil, fmt.Errorf("%w: the request carries no audio", errAudio)
	}
	if p.format.Encoding != audio.EncodingNone {
		if kind := api.ContainerKind(head); kind != "" {
			return nil, fmt.Errorf("%w: encoding=%s was declared but the audio is %s; omit encoding and sample_rate for containerized audio", errAudio, p.opts.Encoding, kind)
		}
	}
	dec, err := audio.NewStreamDecoder(p.format)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAudio, err)
	}
	defer dec.Close()

	out := &decoded{}
	var convs []*audio.Converter16kMono
	var frames int64
	var split []float32
	push := func(samples []float32, last bool) error {
		if convs == nil {
			info, ok := dec.Info()
			if !ok {
				if len(samples) == 0 {
					return nil
				}
				return fmt.Errorf("%w: the format of the audio is unknown", errAudio)
			}
			out.info = info
			n, ch := 1, info.Channels
			if p.opts.Multichannel && info.Channels > 1 {
				n, ch = info.Channels, 1
			}
			for range n {
				c, err := audio.NewConverter16kMono(info.SampleRate, ch)
				if err != nil {
					return fmt.Errorf("%w: %w", errAudio, err)
				}
				convs = append(convs, c)
			}
			sinks, err := open(ctx, n)
			if err != nil {
				return err
			}
			out.channels = sinks
		}
		frames += int64(len(samples) / out.info.Channels)
		if float64(frames)/float64(out.info.SampleRate) > maxDuration.Seconds() {
			return &tooLongError{max: maxDuration}
		}
		nch := out.info.Channels
		for c, conv := range convs {
			in := samples
			if len(convs) > 1 {
				split = split[:0]
				for i := c; i < len(samples); i += nch {
					split = append(split, samples[i])
				}
				in = split
			}
			if err := out.channels[c].push(conv.Convert(in)); err != nil {
				return err
			}
			if last {
				if err := out.channels[c].push(conv.Flush()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	fail := func(err error) (*decoded, error) { return out, err }
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		n, rerr := br.Read(buf)
		for in := buf[:n]; len(in) > 0; {
			piece := in[:min(len(in), decodePiece)]
			in = in[len(piece):]
			samples, err := dec.Decode(piece)
			if err != nil {
				return fail(fmt.Errorf("%w: %w", errAudio, err))
			}
			if err := push(samples, false); err != nil {
				return fail(err)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
	tail, err := dec.Flush()
	if err != nil {
		return fail(fmt.Errorf("%w: %w", errAudio, err))
	}
	if err := push(tail, true); err != nil {
		return fail(err)
	}
	if convs == nil {
		return fail(fmt.Errorf("%w: no audio could be decoded", errAudio))
	}
	if want, ok := declaredContainer(p.opts.Encoding); ok && out.info.Container != want {
		return fail(fmt.Errorf("%w: encoding=%s was declared but the audio is %s", errAudio, p.opts.Encoding, out.info.Container))
	}
	for _, c := range out.channels {
		if err := c.end(); err != nil {
			return fail(err)
		}
	}
	out.seconds = float64(frames) / float64(out.info.SampleRate)
	return out, nil
}

// decodePiece is how much of a body the decoder is given at once: what
// it decodes to is held at once (and the buffers that take it keep that
// size), and a kilobyte of FLAC of digital silence, as a decoded
// recording's quiet stretches are, is some 350,000 samples (1.4 MB);
// 64 KB of it, 18 million. A kilobyte of WAV is 512 samples.
const decodePiece = 1 << 10

// writeBatchError answers the failures of reading a batch request's audio.
func writeBatchError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		mbe  *http.MaxBytesError
		long *tooLongError
	)
	switch {
	case errors.As(err, &mbe):
		writeError(w, r, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, fmt.Sprintf("The audio is larger than the local engine accepts (%d MiB).", maxBatchBytes>>20))
	case errors.As(err, &long):
		writeError(w, r, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, "The audio is too long: "+long.detail()+".")
	case errors.Is(err, audio.ErrTooLarge):
		writeError(w, r, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, "The audio expands to more than the local engine can hold.")
	case errors.Is(err, errRemote):
		writeError(w, r, http.StatusBadRequest, api.CodeRemoteContentError, err.Error())
	case errors.Is(err, errPayload):
		writeError(w, r, http.StatusBadRequest, api.CodePayloadError, err.Error())
	default:
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, "Bad Request: "+err.Error())
	}
}

// transcribeAudio recognises every channel of the audio (or their mix)
// and builds the service's response.
func (e *Engine) transcribeAudio(ctx context.Context, plan *listenPlan, audioIn *decoded, sum hash.Hash, rid string) (*api.ListenResponse, error) {
	model := listenModelFor(plan.opts.Model)
	resp := &api.ListenResponse{
		Metadata: api.ListenMetadata{
			TransactionKey: transactionKey,
			RequestID:      rid,
			SHA256:         hex.EncodeToString(sum.Sum(nil)),
			Created:        e.clock.Now().UTC().Format(createdLayout),
			Duration:       round6(audioIn.seconds),
			Channels:       audioIn.info.Channels,
			Models:         []string{model.uuid},
			ModelInfo:      map[string]api.ModelInfo{model.uuid: model.info()},
			Tags:           plan.opts.Tag,
			Extra:          plan.opts.Extra,
		},
		Results: api.ListenResults{Channels: []api.ResultChannel{}},
	}
	if plan.diarize {
		info := plan.diarizeVersion.Info()
		resp.Metadata.DiarizeInfo = &api.DiarizeInfo{ModelUUID: info.ModelUUID, Arch: info.Arch}
	}
	var analysed []string // the first channel's words, as analysed
	for ch, a := range audioIn.channels {
		alt, words, err := e.transcribeChannel(ctx, plan, a)
		if err != nil {
			return nil, err
		}
		if ch == 0 {
			analysed = words
		}
		resp.Results.Channels = append(resp.Results.Channels, api.ResultChannel{Alternatives: []api.Alternative{alt}})
		if plan.opts.Utterances {
			resp.Results.Utterances = append(resp.Results.Utterances,
				format.Utterances(alt.Words, format.UtteranceOptions{Split: plan.opts.UttSplit, Channel: ch}, uuid.NewString)...)
		}
	}
	if plan.opts.Utterances {
		slices.SortStableFunc(resp.Results.Utterances, func(a, b api.Utterance) int {
			switch {
			case a.Start < b.Start:
				return -1
			case a.Start > b.Start:
				return 1
			}
			return 0
		})
		if resp.Results.Utterances == nil {
			resp.Results.Utterances = []api.Utterance{}
		}
	}
	if iopts := listenIntelOptions(&plan.opts); iopts != (intel.Options{}) {
		if err := analyseTranscript(ctx, iopts, analysed, resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// transcribeChannel recognises one channel of 16 kHz mono audio, unless
// it was recognised as it was decoded. With audio intelligence requested
// it also returns the channel's words as the analysis reads them (see
// analysisWords).
func (e *Engine) transcribeChannel(ctx context.Context, plan *listenPlan, a *channelAudio) (api.Alternative, []string, error) {
	results, pcm := a.finals, a.pcm
	if a.done == nil {
		dec, release, err := e.recognizerFor(listenModelFor(plan.opts.Model)).decoder(ctx, plan.postSpeech)
		if err != nil {
			return api.Alternative{}, nil, err
		}
		results, err = dec.Transcribe(ctx, pcm)
		release()
		if err != nil {
			return api.Alternative{}, nil, fmt.Errorf("recognise: %w", err)
		}
	}
	words, boundaries := wordsOf(results)
	if plan.diarize && len(words) > 0 {
		var err error
		words, err = diarize.Diarize(ctx, plan.diarizeVersion, diarize.FromInt16(pcm), words)
		if err != nil {
			return api.Alternative{}, nil, fmt.Errorf("diarize: %w", err)
		}
	}
	sh := plan.shape(words, boundaries, true)
	alt := sh.alt
	alt.Entities = sh.entities
	var analysed []string
	if listenIntelOptions(&plan.opts) != (intel.Options{}) {
		if len(alt.Words) != len(words) {
			boundaries = nil // they index the recogniser's words, which formatting joined
		}
		analysed = analysisWords(alt.Words, boundaries)
	}
	return alt, analysed, nil
}

func round6(x float64) float64 {
	const k = 1e6
	return float64(int64(x*k+0.5)) / k
}

func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// listenIntelOptions are the audio-intelligence features a batch request
// asks for. summarize=true is served as summarize=v2 (results.summary);
// the engine has no legacy per-alternative summaries.
func listenIntelOptions(o *api.ListenOptions) intel.Options {
	return intelOptions(o.Summarize != "", o.Sentiment, o.Topics, o.Intents)
}

// checkListenIntelligence refuses the audio-intelligence requests the
// engine does not serve: custom topics and intents, and intelligence on
// multichannel audio, where the service's single results block would have
// to pick one channel's words.
func checkListenIntelligence(o *api.ListenOptions) error {
	switch {
	case len(o.CustomTopic) > 0:
		return notOffered("custom_topic")
	case len(o.CustomIntent) > 0:
		return notOffered("custom_intent")
	case o.Multichannel && listenIntelOptions(o) != (intel.Options{}):
		return notOffered("summarize, sentiment, topics and intents on multichannel audio")
	}
	return nil
}

// analysisWords returns each transcript word as the analysis reads it:
// its punctuated form, so that sentences can be told apart. Without
// punctuate or smart_format the words carry none, so they are punctuated
// here, for the analysis only (punctuation never changes the number of
// words); boundaries, when not nil, are the recogniser's utterance ends.
func analysisWords(words []api.Word, boundaries []int) []string {
	if len(words) > 0 && words[0].PunctuatedWord == "" {
		if res := format.Apply(slices.Clone(words), format.Options{Punctuate: true, Boundaries: boundaries}); len(res.Words) == len(words) {
			words = res.Words
		}
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.Text()
	}
	return out
}

// analyseTranscript runs the requested audio intelligence on the first
// channel's transcript and writes the results and their metadata into
// resp. Segment word indexes are those of the channel's words array.
func analyseTranscript(ctx context.Context, opts intel.Options, words []string, resp *api.ListenResponse) error {
	// The analysed text is the words joined by spaces; a formatted word
	// that holds a space ("[SSN_1]" never does, but a formatter may) maps
	// each of its parts back to itself.
	var b strings.Builder
	var wordOf []int
	for i, w := range words {
		for _, f := range strings.Fields(w) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f)
			wordOf = append(wordOf, i)
		}
	}
	text := b.String()
	res, err := intel.Analyze(ctx, text, opts)
	if err != nil {
		return fmt.Errorf("analyse transcript: %w", err)
	}
	word := func(k int) int {
		if len(wordOf) == 0 {
			return 0
		}
		return wordOf[min(max(k, 0), len(wordOf)-1)]
	}
	out := convertIntel(res, textseg.Tokens(text), word, opts)
	if opts.Summarize {
		resp.Results.Summary = &api.SummaryResult{Result: "success", Short: res.Summary}
	}
	resp.Results.Sentiments, resp.Results.Topics, resp.Results.Intents = out.sentiments, out.topics, out.intents
	md := &resp.Metadata
	md.SummaryInfo, md.SentimentInfo, md.TopicsInfo, md.IntentsInfo = out.summaryInfo, out.sentimentInfo, out.topicsInfo, out.intentsInfo
	return nil
}
