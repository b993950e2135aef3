package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
)

// postListen sends a batch request with a raw query and body to the
// shared engine.
func postListen(t *testing.T, rawQuery string, body []byte, ctype string) answer {
	t.Helper()
	return postTyped(t, api.PathListen, rawQuery, body, ctype)
}

// listenOK decodes a successful batch answer.
func (a answer) listenOK(t *testing.T) *api.ListenResponse {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d; body %s", a.status, a.body)
	}
	var r api.ListenResponse
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatalf("body %s: %v", a.body, err)
	}
	return &r
}

// TestBatchMatchesPocketsphinx checks that batch transcription is
// pocketsphinx_continuous's hypothesis, word for word, on every LibriVox
// recording: the engine decodes WAV, converts and segments exactly as the
// reference tool does.
func TestBatchMatchesPocketsphinx(t *testing.T) {
	t.Parallel()
	for _, id := range clipIDs {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			want := sphinxCLI(t, clipPath(id))
			r := batchTranscript(t, id)
			if got := r.Transcript(); got != want {
				t.Errorf("transcript\n got %q\nwant %q (pocketsphinx_continuous)", got, want)
			}
			alt := r.Results.Channels[0].Alternatives[0]
			checkWords(t, alt.Words)
			var ws []string
			for _, w := range alt.Words {
				ws = append(ws, w.Word)
			}
			if got := strings.Join(ws, " "); got != alt.Transcript {
				t.Errorf("words %q do not spell the transcript %q", got, alt.Transcript)
			}
			if alt.Confidence <= 0 || alt.Confidence > 1 {
				t.Errorf("confidence %v", alt.Confidence)
			}
		})
	}
}

func TestBatchResponseShape(t *testing.T) {
	t.Parallel()
	body := readFile(t, clipPath("0880"))
	before := time.Now().UTC()
	a := postListen(t, "", body, "audio/wav")
	r := a.listenOK(t)
	md := r.Metadata
	sum := sha256.Sum256(body)
	if md.TransactionKey != "deprecated" {
		t.Errorf("transaction_key %q", md.TransactionKey)
	}
	if md.RequestID != a.header.Get(api.HeaderRequestID) {
		t.Errorf("request_id %q, header %q", md.RequestID, a.header.Get(api.HeaderRequestID))
	}
	if _, err := uuid.Parse(md.RequestID); err != nil {
		t.Errorf("request_id %q: %v", md.RequestID, err)
	}
	if md.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %q, want that of the body %x", md.SHA256, sum)
	}
	created, err := time.Parse("2006-01-02T15:04:05.000Z", md.Created)
	if err != nil {
		t.Errorf("created %q is not RFC 3339 with milliseconds and Z: %v", md.Created, err)
	} else if created.Before(before.Add(-time.Second)) || created.After(time.Now().Add(time.Second)) {
		t.Errorf("created %v, the request ran from %v", created, before)
	}
	if math.Abs(md.Duration-2.99) > 0.001 {
		t.Errorf("duration %v, want 2.99 (the recording's length)", md.Duration)
	}
	if md.Channels != 1 {
		t.Errorf("channels %d", md.Channels)
	}
	if len(md.Models) != 1 {
		t.Fatalf("models %v", md.Models)
	}
	if mi, ok := md.ModelInfo[md.Models[0]]; !ok || mi.Arch != "pocketsphinx" || !strings.Contains(mi.Name, "pocketsphinx") || mi.Version == "" {
		t.Errorf("model_info %+v: want the model named by models, naming pocketsphinx", md.ModelInfo)
	}
	if md.DiarizeInfo != nil || md.Tags != nil || md.Extra != nil || md.Warnings != nil {
		t.Errorf("metadata %+v: optional blocks present without their options", md)
	}
	if len(r.Results.Channels) != 1 || len(r.Results.Channels[0].Alternatives) != 1 {
		t.Fatalf("results %+v: want one channel with one alternative", r.Results)
	}
	checkWords(t, r.Results.Channels[0].Alternatives[0].Words)
	if r.Results.Utterances != nil {
		t.Error("utterances without utterances=true")
	}

	// The exact keys on the wire.
	var raw struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Results  struct {
			Channels []struct {
				Alternatives []map[string]json.RawMessage `json:"alternatives"`
			} `json:"channels"`
		} `json:"results"`
	}
	if err := json.Unmarshal(a.body, &raw); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(raw.Metadata), []string{"channels", "created", "duration", "model_info", "models", "request_id", "sha256", "transaction_key"}; !slices.Equal(got, want) {
		t.Errorf("metadata keys %v, want %v", got, want)
	}
	if got, want := sortedKeys(raw.Results.Channels[0].Alternatives[0]), []string{"confidence", "transcript", "words"}; !slices.Equal(got, want) {
		t.Errorf("alternative keys %v, want %v", got, want)
	}
	if a.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", a.header.Get("Content-Type"))
	}
}

// audioTestdata is the directory of the audio package's test files: the
// first seconds of LibriVox clip 0870 in every format the engine decodes.
const audioTestdata = "../audio/testdata"

// TestBatchFormats transcribes the same speech in every container and
// encoding and compares the words with those of the original samples at
// the file's sample rate, sent as raw linear16: what is measured is the
// container and codec, not the recogniser. (At 8 kHz the wideband model
// itself does poorly: the clean 8 kHz reference shares 0.31 of its words
// with the 16 kHz one.) The minimum overlaps were measured, with the
// figures in the table, and set a little below them: lossy codecs change
// what the recogniser hears, but a broken decoder (wrong rate, channels,
// byte order) gives next to no overlap.
func TestBatchFormats(t *testing.T) {
	t.Parallel()
	orig := clipSamples(t, "0870")
	type key struct {
		seconds float64
		rate    int
	}
	refs := map[key]string{}
	ref := func(t *testing.T, k key) string {
		t.Helper()
		if r, ok := refs[k]; ok {
			return r
		}
		pcm := orig[:int(k.seconds*16000)]
		if k.rate != 16000 {
			down, err := audio.Resample(audio.Int16ToFloat32(nil, pcm), 16000, k.rate, 1)
			if err != nil {
				t.Fatal(err)
			}
			pcm = audio.Float32ToInt16(nil, down)
		}
		q := url.Values{"encoding": {"linear16"}, "sample_rate": {strconv.Itoa(k.rate)}}
		r := postListen(t, q.Encode(), pcmBytes(pcm), "").listenOK(t).Transcript()
		refs[k] = r
		return r
	}
	for _, tc := range []struct {
		file     string
		query    string
		seconds  float64 // how much of the original the file holds
		rate     int
		channels int
		min      float64 // measured: see the comment at the end of the line
	}{
		{"speech.flac", "", 3, 16000, 1, 1},                                     // 1.00 (lossless)
		{"speech.flac", "encoding=flac", 3, 16000, 1, 1},                        // 1.00
		{"speech-24bit.wav", "", 1.5, 16000, 1, 1},                              // 1.00
		{"speech-float.wav", "", 1.25, 16000, 1, 1},                             // 1.00
		{"speech-16k-mono.mp3", "", 3, 16000, 1, 0.45},                          // 0.50 (48 kbit/s)
		{"speech-44k-stereo.mp3", "", 3, 16000, 2, 0.7},                         // 0.80 (96 kbit/s)
		{"speech-44k-stereo.wav", "", 0.5, 16000, 2, 0},                         // 0.00: 0.5 s is one word at most
		{"speech.ogg", "", 3, 16000, 1, 0.55},                                   // 0.63 (Vorbis q2)
		{"speech.opus", "", 3, 16000, 1, 0.45},                                  // 0.50 (24 kbit/s)
		{"speech-8k-alaw.wav", "", 3, 8000, 1, 0.4},                             // 0.57
		{"speech-8k.mulaw", "encoding=mulaw&sample_rate=8000", 3, 8000, 1, 0.4}, // 0.57
		{"speech-8k-u8.wav", "", 3, 8000, 1, 0},                                 // 0.00: 8-bit noise at 8 kHz
	} {
		path := filepath.Join(audioTestdata, tc.file)
		var r *api.ListenResponse
		if tc.query == "" {
			r = batchFile(t, path)
		} else {
			r = postListen(t, tc.query, readFile(t, path), "").listenOK(t)
		}
		want := ref(t, key{tc.seconds, tc.rate})
		got := r.Transcript()
		overlap := testkit.WordOverlap(want, got)
		t.Logf("%-22s %-32s overlap %.2f  %q", tc.file, tc.query, overlap, got)
		if overlap < tc.min {
			t.Errorf("%s %s: overlap %.2f < %.2f\n got %q\nwant %q", tc.file, tc.query, overlap, tc.min, got, want)
		}
		if math.Abs(r.Metadata.Duration-tc.seconds) > 0.08 {
			t.Errorf("%s: duration %v, want %v", tc.file, r.Metadata.Duration, tc.seconds)
		}
		if r.Metadata.Channels != tc.channels {
			t.Errorf("%s: channels %d, want %d", tc.file, r.Metadata.Channels, tc.channels)
		}
		if len(r.Results.Channels) != 1 {
			t.Errorf("%s: %d result channels without multichannel", tc.file, len(r.Results.Channels))
		}
		checkWords(t, r.Results.Channels[0].Alternatives[0].Words)
	}
	t.Logf("8 kHz reference %q, 16 kHz %q: overlap %.2f", ref(t, key{3, 8000}), ref(t, key{3, 16000}),
		testkit.WordOverlap(ref(t, key{3, 8000}), ref(t, key{3, 16000})))
}

// TestBatchRawPCM checks headerless audio described by encoding and
// sample_rate: linear16 is exactly the WAV file's samples.
func TestBatchRawPCM(t *testing.T) {
	t.Parallel()
	samples := clipSamples(t, "0880")
	want := batchTranscript(t, "0880").Transcript()
	raw := postListen(t, "encoding=linear16&sample_rate=16000", pcmBytes(samples), "application/octet-stream").listenOK(t)
	if got := raw.Transcript(); got != want {
		t.Errorf("raw linear16 %q, WAV %q", got, want)
	}
	// The same samples in other raw encodings at 16 kHz: linear32, here
	// as two equal interleaved channels (channels=2), which mix back to
	// the same samples; mu-law keeps about 13 bits of the 16, which the
	// recogniser barely notices (measured overlap 1.00).
	f := audio.Int16ToFloat32(nil, samples)
	stereo := make([]float32, 2*len(f))
	for i, v := range f {
		stereo[2*i], stereo[2*i+1] = v, v
	}
	for _, tc := range []struct {
		query    string
		body     []byte
		channels int
		min      float64
	}{
		{"encoding=linear32&sample_rate=16000&channels=2", audio.EncodePCM(nil, stereo, audio.EncodingLinear32), 2, 1},
		{"encoding=mulaw&sample_rate=16000", audio.EncodePCM(nil, f, audio.EncodingMulaw), 1, 0.7},
	} {
		r := postListen(t, tc.query, tc.body, "").listenOK(t)
		o := testkit.WordOverlap(want, r.Transcript())
		t.Logf("%s: overlap %.2f %q", tc.query, o, r.Transcript())
		if o < tc.min {
			t.Errorf("%s: %q, overlap %.2f with linear16 %q", tc.query, r.Transcript(), o, want)
		}
		if math.Abs(r.Metadata.Duration-2.99) > 0.001 || r.Metadata.Channels != tc.channels {
			t.Errorf("%s: duration %v channels %d", tc.query, r.Metadata.Duration, r.Metadata.Channels)
		}
	}
}

func TestBatchAudioErrors(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, silence(t, 3200), 16000, 1)
	ogg := readFile(t, filepath.Join(audioTestdata, "speech.opus"))
	for _, tc := range []struct {
		name, query string
		body        []byte
		status      int
		code        string
		msgPrefix   string
		msgContains string
	}{
		{"raw encoding declared, WAV sent", "encoding=linear16&sample_rate=16000", wav, 400, api.CodeBadRequest,
			"Bad Request: failed to process audio: encoding=linear16 was declared but the audio is wav", "omit encoding"},
		{"mulaw declared, Ogg Opus sent", "encoding=mulaw&sample_rate=8000", ogg, 400, api.CodeBadRequest,
			"Bad Request: failed to process audio: encoding=mulaw was declared but the audio is ogg", "omit encoding"},
		{"flac declared, WAV sent", "encoding=flac", wav, 400, api.CodeBadRequest,
			"Bad Request: failed to process audio: encoding=flac was declared but the audio is wav", ""},
		{"garbage", "", []byte("this is not audio, just some text that came in the body"), 400, api.CodeBadRequest,
			"Bad Request: failed to process audio", ""},
		{"truncated WAV", "", wav[:30], 400, api.CodeBadRequest, "Bad Request: failed to process audio", ""},
		{"empty body", "", nil, 400, api.CodeBadRequest, "Bad Request: failed to process audio", "no audio"},
		{"empty raw body", "encoding=linear16&sample_rate=16000", nil, 400, api.CodeBadRequest, "Bad Request: failed to process audio", ""},
		{"raw without sample_rate", "encoding=linear16", pcmBytes(silence(t, 1600)), 400, api.CodeBadRequest, "sample_rate is required", ""},
		{"unknown encoding", "encoding=aac", pcmBytes(silence(t, 1600)), 400, api.CodeBadRequest, "unknown encoding", ""},
		{"encoding the engine does not decode", "encoding=speex&sample_rate=16000", pcmBytes(silence(t, 1600)), 400, api.CodeBadRequest,
			"The local engine does not offer encoding=speex yet.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := postListen(t, tc.query, tc.body, "")
			a.wantError(t, tc.status, tc.code, "")
			msg := a.legacy(t).ErrMsg
			if !strings.HasPrefix(msg, tc.msgPrefix) || !strings.Contains(msg, tc.msgContains) {
				t.Errorf("err_msg %q: want it to start with %q and contain %q", msg, tc.msgPrefix, tc.msgContains)
			}
		})
	}
}

// TestBatchURL checks a JSON {"url": ...} body: the engine fetches the
// audio itself.
func TestBatchURL(t *testing.T) {
	t.Parallel()
	wav := readFile(t, clipPath("0880"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/0880.wav" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write(wav)
	}))
	defer srv.Close()
	ctx := testContext(t, time.Minute)
	c := newClient(t, shared)

	r, err := c.TranscribeURL(ctx, srv.URL+"/0880.wav", api.ListenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := batchTranscript(t, "0880").Transcript(); r.Transcript() != want {
		t.Errorf("transcript of the fetched file %q, want %q", r.Transcript(), want)
	}
	sum := sha256.Sum256(wav)
	if r.Metadata.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s: want that of the fetched audio", r.Metadata.SHA256)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	js := func(v string) []byte { return []byte(`{"url": ` + v + `}`) }
	for _, tc := range []struct {
		name   string
		body   []byte
		code   string
		prefix string
	}{
		{"not found", js(`"` + srv.URL + `/missing.wav"`), api.CodeRemoteContentError, "remote content: fetching"},
		{"nothing listening", js(`"` + closedURL + `/a.wav"`), api.CodeRemoteContentError, "remote content: could not fetch"},
		{"not http", js(`"ftp://127.0.0.1/a.wav"`), api.CodePayloadError, "payload"},
		{"no URL", []byte(`{}`), api.CodePayloadError, "payload"},
		{"not JSON", []byte(`{"url": `), api.CodePayloadError, "payload: the JSON body must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := postListen(t, "", tc.body, "application/json")
			a.wantError(t, http.StatusBadRequest, tc.code, "")
			if msg := a.legacy(t).ErrMsg; !strings.HasPrefix(msg, tc.prefix) {
				t.Errorf("err_msg %q, want prefix %q", msg, tc.prefix)
			}
		})
	}
	t.Run("fetched file is not audio", func(t *testing.T) {
		text := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("plain text, not audio"))
		}))
		defer text.Close()
		a := postListen(t, "", js(`"`+text.URL+`"`), "application/json")
		a.wantError(t, http.StatusBadRequest, api.CodeBadRequest, "")
		if msg := a.legacy(t).ErrMsg; !strings.HasPrefix(msg, "Bad Request: failed to process audio") {
			t.Errorf("err_msg %q", msg)
		}
	})
}

// TestBatchFormatting checks the shapes of the formatting options.
func TestBatchFormatting(t *testing.T) {
	t.Parallel()
	c := newClient(t, shared)
	ctx := testContext(t, 2*time.Minute)
	plain := batchTranscript(t, "0880").Results.Channels[0].Alternatives[0]
	clip := readFile(t, clipPath("0880"))

	t.Run("punctuate", func(t *testing.T) {
		r, err := c.Transcribe(ctx, bytes.NewReader(clip), "", api.ListenOptions{Punctuate: true})
		if err != nil {
			t.Fatal(err)
		}
		alt := r.Results.Channels[0].Alternatives[0]
		if len(alt.Words) != len(plain.Words) {
			t.Fatalf("%d words, %d without punctuate", len(alt.Words), len(plain.Words))
		}
		var pw []string
		for i, w := range alt.Words {
			if w.PunctuatedWord == "" || !strings.EqualFold(strings.Trim(w.PunctuatedWord, ".,?!"), w.Word) || w.Word != plain.Words[i].Word {
				t.Errorf("word %d %+v: want punctuated_word, the same word", i, w)
			}
			pw = append(pw, w.PunctuatedWord)
		}
		if alt.Transcript != strings.Join(pw, " ") {
			t.Errorf("transcript %q is not the punctuated words %q", alt.Transcript, strings.Join(pw, " "))
		}
		if first := []rune(alt.Transcript)[0]; !unicode.IsUpper(first) || !strings.HasSuffix(alt.Transcript, ".") {
			t.Errorf("transcript %q: want a capital and a full stop", alt.Transcript)
		}
		if alt.Paragraphs != nil {
			t.Error("paragraphs without paragraphs or smart_format")
		}
	})
	t.Run("smart_format gives paragraphs", func(t *testing.T) {
		r, err := c.Transcribe(ctx, bytes.NewReader(clip), "", api.ListenOptions{SmartFormat: true})
		if err != nil {
			t.Fatal(err)
		}
		alt := r.Results.Channels[0].Alternatives[0]
		checkParagraphs(t, alt)
		if alt.Words[0].PunctuatedWord == "" {
			t.Error("smart_format without punctuated_word")
		}
	})
	t.Run("paragraphs and utterances", func(t *testing.T) {
		// "he was not", twice, with a pause of about 1.1 s between.
		he := clipSamples(t, "0880")[:int(1.05*16000)]
		pcm := append(append(slices.Clone(he), silence(t, 16000)...), he...)
		wav := wavBytes(t, pcm, 16000, 1)
		for _, tc := range []struct {
			split float64
			n     int
		}{{0, 2}, {2, 1}} {
			r, err := c.Transcribe(ctx, bytes.NewReader(wav), "", api.ListenOptions{Paragraphs: true, Utterances: true, UttSplit: tc.split})
			if err != nil {
				t.Fatal(err)
			}
			alt := r.Results.Channels[0].Alternatives[0]
			checkParagraphs(t, alt)
			checkUtterances(t, r.Results.Utterances, alt.Words, tc.split, 1)
			if len(r.Results.Utterances) != tc.n {
				t.Errorf("utt_split %v: %d utterances, want %d", tc.split, len(r.Results.Utterances), tc.n)
			}
		}
	})
}

// checkParagraphs checks the paragraphs block of an alternative.
func checkParagraphs(t *testing.T, alt api.Alternative) {
	t.Helper()
	p := alt.Paragraphs
	if p == nil || len(p.Paragraphs) == 0 {
		t.Fatalf("no paragraphs in %+v", alt)
	}
	if !strings.HasPrefix(p.Transcript, "\n") {
		t.Errorf("paragraphs transcript %q does not start with a newline", p.Transcript)
	}
	n := 0
	for _, pg := range p.Paragraphs {
		n += pg.NumWords
		if len(pg.Sentences) == 0 || pg.Start > pg.End {
			t.Errorf("paragraph %+v", pg)
		}
		for _, s := range pg.Sentences {
			if s.Text == "" || s.Start > s.End || s.Start < pg.Start || s.End > pg.End {
				t.Errorf("sentence %+v in paragraph %v-%v", s, pg.Start, pg.End)
			}
		}
	}
	if n != len(alt.Words) {
		t.Errorf("paragraphs count %d words, the alternative has %d", n, len(alt.Words))
	}
}

// checkUtterances checks that utterances partition the words of the
// channels at the gaps of split seconds or more.
func checkUtterances(t *testing.T, utts []api.Utterance, words []api.Word, split float64, channels int) {
	t.Helper()
	if split == 0 {
		split = 0.8
	}
	if len(utts) == 0 {
		t.Fatal("no utterances")
	}
	var all []api.Word
	for i, u := range utts {
		if _, err := uuid.Parse(u.ID); err != nil {
			t.Errorf("utterance %d id %q: %v", i, u.ID, err)
		}
		if len(u.Words) == 0 || u.Start != u.Words[0].Start || u.End != u.Words[len(u.Words)-1].End || u.Channel < 0 || u.Channel >= channels {
			t.Errorf("utterance %d %+v", i, u)
			continue
		}
		if i > 0 && u.Start < utts[i-1].Start {
			t.Errorf("utterance %d starts at %v, before the one before it", i, u.Start)
		}
		var ws []string
		for j, w := range u.Words {
			ws = append(ws, w.Text())
			if j > 0 && w.Start-u.Words[j-1].End >= split {
				t.Errorf("utterance %d holds a gap of %v s (utt_split %v)", i, w.Start-u.Words[j-1].End, split)
			}
		}
		if u.Transcript != strings.Join(ws, " ") {
			t.Errorf("utterance %d transcript %q, words %q", i, u.Transcript, strings.Join(ws, " "))
		}
		if u.Channel == 0 {
			if i > 0 && utts[i-1].Channel == 0 && u.Start-utts[i-1].End < split {
				t.Errorf("utterances %d and %d are split at a gap of %v s (utt_split %v)", i-1, i, u.Start-utts[i-1].End, split)
			}
			all = append(all, u.Words...)
		}
	}
	if words != nil && len(all) != len(words) {
		t.Errorf("utterances of channel 0 hold %d words, the channel %d", len(all), len(words))
	}
}

// placeholder is how a redacted entity reads: its type and a number.
var placeholder = regexp.MustCompile(`\[[A-Z_]+_1\]`)

// diarizeClip is a test clip of two voices of different sex, 15.8 s, with
// "ten" spoken in it (engine/diarize/testdata).
const diarizeClip = "diarize/testdata/two_fm.wav"

// twoVoices returns the first 7.1 s of diarizeClip: a woman asks a
// question, then a man answers "no issues, about ten minutes late ...".
func twoVoices(t *testing.T) []int16 {
	t.Helper()
	buf, err := audio.Decode(context.Background(), bytes.NewReader(readFile(t, diarizeClip)))
	if err != nil {
		t.Fatal(err)
	}
	if buf.SampleRate != 16000 || buf.Channels != 1 {
		t.Fatalf("%s: %d Hz, %d channels", diarizeClip, buf.SampleRate, buf.Channels)
	}
	return audio.Float32ToInt16(nil, buf.Samples[:int(7.1*16000)])
}

// TestBatchIntelligence checks diarization, entities and redaction.
func TestBatchIntelligence(t *testing.T) {
	t.Parallel()
	c := newClient(t, shared)
	ctx := testContext(t, 2*time.Minute)
	pcm := twoVoices(t)
	twoTurns := wavBytes(t, pcm, 16000, 1)
	// The second turn alone.
	turn := wavBytes(t, pcm[int(3.2*16000):], 16000, 1)

	t.Run("diarize_model latest, entities", func(t *testing.T) {
		r, err := c.Transcribe(ctx, bytes.NewReader(twoTurns), "", api.ListenOptions{DiarizeModel: "latest", DetectEntities: true, SmartFormat: true})
		if err != nil {
			t.Fatal(err)
		}
		if di := r.Metadata.DiarizeInfo; di == nil || di.Arch != "v2" || di.ModelUUID == "" {
			t.Errorf("diarize_info %+v: latest is v2 in batch", di)
		}
		alt := r.Results.Channels[0].Alternatives[0]
		speakers := checkSpeakers(t, alt.Words)
		if len(speakers) < 2 {
			t.Errorf("speakers %v: the clip has two voices", speakers)
		}
		for _, pg := range alt.Paragraphs.Paragraphs {
			if pg.Speaker == nil {
				t.Errorf("paragraph %+v without speaker", pg)
			}
		}
		var found bool
		for _, e := range alt.Entities {
			if e.StartWord < 0 || e.EndWord > len(alt.Words) || e.StartWord >= e.EndWord || e.Confidence < 0 || e.Confidence > 1 {
				t.Errorf("entity %+v over %d words", e, len(alt.Words))
			}
			if e.Label == "CARDINAL" && e.RawValue == "ten" && e.Value == "10" {
				found = true
			}
		}
		if !found {
			t.Errorf("entities %+v: want CARDINAL 10 (\"ten\")", alt.Entities)
		}
	})
	t.Run("redact", func(t *testing.T) {
		r, err := c.Transcribe(ctx, bytes.NewReader(turn), "", api.ListenOptions{Redact: []string{"aggressive_numbers"}, DetectEntities: true})
		if err != nil {
			t.Fatal(err)
		}
		alt := r.Results.Channels[0].Alternatives[0]
		ph := placeholder.FindString(alt.Transcript)
		if strings.Contains(alt.Transcript, " ten ") || !strings.Contains(alt.Transcript, "about "+ph+" minutes") {
			t.Errorf("transcript %q: want ten redacted by a placeholder", alt.Transcript)
		}
		var redacted bool
		for _, e := range alt.Entities {
			if e.Label == "CARDINAL" {
				redacted = e.Value == ph && !strings.Contains(e.RawValue, "ten")
			}
		}
		if !redacted {
			t.Errorf("entities %+v: want the CARDINAL with the placeholder %q as its value", alt.Entities, ph)
		}
		// Found only to redact them, entities are not reported.
		r, err = c.Transcribe(ctx, bytes.NewReader(turn), "", api.ListenOptions{Redact: []string{"aggressive_numbers"}})
		if err != nil {
			t.Fatal(err)
		}
		if alt := r.Results.Channels[0].Alternatives[0]; alt.Entities != nil || !strings.Contains(alt.Transcript, ph) {
			t.Errorf("redact without detect_entities: entities %v, transcript %q", alt.Entities, alt.Transcript)
		}
	})
	t.Run("diarize_model v1 and the deprecated diarize", func(t *testing.T) {
		short := wavBytes(t, clipSamples(t, "0880")[:int(1.2*16000)], 16000, 1)
		for _, tc := range []struct {
			opts api.ListenOptions
			arch string
		}{
			{api.ListenOptions{DiarizeModel: "v1"}, "v1"},
			{api.ListenOptions{DiarizeModel: "v2"}, "v2"},
			{api.ListenOptions{Diarize: true}, "v2"},
		} {
			r, err := c.Transcribe(ctx, bytes.NewReader(short), "", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if di := r.Metadata.DiarizeInfo; di == nil || di.Arch != tc.arch {
				t.Errorf("%+v: diarize_info %+v, want arch %s", tc.opts, di, tc.arch)
			}
			checkSpeakers(t, r.Results.Channels[0].Alternatives[0].Words)
		}
	})
	t.Run("unsupported redaction", func(t *testing.T) {
		a := postListen(t, "redact=name", turn, "")
		a.wantError(t, http.StatusBadRequest, api.CodeBadRequest, "redact=name: redact value not supported by the local engine")
	})
}

// checkSpeakers checks that every word carries a speaker and returns the
// speakers seen.
func checkSpeakers(t *testing.T, ws []api.Word) map[int]int {
	t.Helper()
	seen := map[int]int{}
	for i, w := range ws {
		if w.Speaker == nil || *w.Speaker < 0 || w.SpeakerConfidence == nil || *w.SpeakerConfidence < 0 || *w.SpeakerConfidence > 1 {
			t.Errorf("word %d %+v: want speaker and speaker_confidence", i, w)
			continue
		}
		seen[*w.Speaker]++
	}
	return seen
}

func TestBatchMultichannel(t *testing.T) {
	t.Parallel()
	stereo := readFile(t, filepath.Join(audioTestdata, "speech-44k-stereo.mp3"))
	a := postListen(t, "multichannel=true&utterances=true", stereo, "audio/mpeg")
	r := a.listenOK(t)
	if len(r.Results.Channels) != 2 || r.Metadata.Channels != 2 {
		t.Fatalf("%d result channels, metadata channels %d: want 2", len(r.Results.Channels), r.Metadata.Channels)
	}
	mono := batchFile(t, filepath.Join(audioTestdata, "speech-44k-stereo.mp3")).Transcript()
	for i, ch := range r.Results.Channels {
		got := ch.Alternatives[0].Transcript
		// Left is the speech, right the speech inverted at half level: both
		// channels carry the words.
		o := testkit.WordOverlap(mono, got)
		t.Logf("channel %d overlap %.2f with the mix: %q", i, o, got)
		if o < 0.45 { // measured: 0.53 and 0.63
			t.Errorf("channel %d %q: overlap %.2f with the mix %q", i, got, o, mono)
		}
		checkWords(t, ch.Alternatives[0].Words)
	}
	checkUtterances(t, r.Results.Utterances, nil, 0, 2)
	chans := map[int]bool{}
	for _, u := range r.Results.Utterances {
		chans[u.Channel] = true
	}
	if !chans[0] || !chans[1] {
		t.Errorf("utterances of channels %v, want both", chans)
	}
}

// TestBatchRefusals checks options the engine refuses in plain words
// rather than answer as if it had honoured them.
func TestBatchRefusals(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, silence(t, 1600), 16000, 1)
	for _, tc := range []struct {
		query  string
		status int
		code   string
		msg    string // exact; "" to check the prefix only
		prefix string
	}{
		{"custom_topic=phones", 400, api.CodeBadRequest, "The local engine does not offer custom_topic yet.", ""},
		{"custom_intent=buy", 400, api.CodeBadRequest, "The local engine does not offer custom_intent yet.", ""},
		{"multichannel=true&summarize=v2", 400, api.CodeBadRequest, "The local engine does not offer summarize, sentiment, topics and intents on multichannel audio yet.", ""},
		{"keyterm=earshot", 400, api.CodeBadRequest, "The local engine does not offer keyterm yet.", ""},
		{"keywords=earshot:2", 400, api.CodeBadRequest, "The local engine does not offer keywords yet.", ""},
		{"search=man", 400, api.CodeBadRequest, "The local engine does not offer search yet.", ""},
		{"replace=man:woman", 400, api.CodeBadRequest, "The local engine does not offer replace yet.", ""},
		{"callback=http://127.0.0.1:1/cb", 400, api.CodeBadRequest, "The local engine does not offer callback yet.", ""},
		{"callback_method=PUT", 400, api.CodeBadRequest, "The local engine does not offer callback yet.", ""},
		{"detect_language=true", 400, api.CodeBadRequest, "The local engine does not offer detect_language yet.", ""},
		{"dictation=true", 400, api.CodeBadRequest, "The local engine does not offer dictation yet.", ""},
		{"measurements=true", 400, api.CodeBadRequest, "The local engine does not offer measurements yet.", ""},
		{"filler_words=true", 400, api.CodeBadRequest, "The local engine does not offer filler_words yet.", ""},
		{"profanity_filter=true", 400, api.CodeBadRequest, "The local engine does not offer profanity_filter yet.", ""},
		{"model=nova-3-medical", 400, api.CodeBadRequest, "", msgNoSuchModel},
		{"model=nova-2-phonecall", 400, api.CodeBadRequest, "", msgNoSuchModel},
		{"model=flux", 400, api.CodeBadRequest, "", "model=flux is not a valid value"},
		{"model=flux-general-en", 400, api.CodeBadRequest, "", "flux-general-en is a turn-aware model, served on /v2/listen only"},
		{"model=aura-asteria-en", 400, api.CodeBadRequest, "", "aura-asteria-en is a text-to-speech voice"},
		{"model=nonsense", 400, api.CodeBadRequest, "", "unknown model"},
		{"language=de", 400, api.CodeBadRequest, msgNoSuchModel + ` The local engine recognises English only, not "de".`, ""},
		{"language=multi", 400, api.CodeBadRequest, "", msgNoSuchModel},
		{"version=2024-01-09.29447", 400, api.CodeBadRequest, msgNoSuchModel + " The local engine has one version of its model: latest.", ""},
		{"punctuate=maybe", 400, api.CodeInvalidQueryParameter, `punctuate must be true or false, not "maybe"`, ""},
		{"sample_rate=-1&encoding=linear16", 400, api.CodeInvalidQueryParameter, "", "sample_rate must be"},
		{"extra=novalue", 400, api.CodeInvalidQueryParameter, "", "extra must be key:value"},
		{"diarize_model=v3", 400, api.CodeBadRequest, "", `diarize_model "v3" is not available for batch`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			a := postListen(t, tc.query, wav, "")
			a.wantError(t, tc.status, tc.code, tc.msg)
			if msg := a.legacy(t).ErrMsg; !strings.HasPrefix(msg, tc.prefix) {
				t.Errorf("err_msg %q, want prefix %q", msg, tc.prefix)
			}
		})
	}
}

// TestBatchAccepted checks options the engine takes: model names and
// aliases, English tags, tag and extra, which come back in metadata, and
// unknown parameters, which the service ignores.
func TestBatchAccepted(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, silence(t, 3200), 16000, 1)
	for _, q := range []string{
		"model=nova-3", "model=NOVA-2", "model=nova", "model=enhanced", "model=base", "model=nova-3-general", "model=base-general",
		"version=latest", "language=en", "language=en-US", "language=en-GB", "language=en_AU",
		"numerals=true", "mip_opt_out=true", "no_such_parameter=1", "interim_results=true", "vad_events=true",
	} {
		t.Run(q, func(t *testing.T) {
			r := postListen(t, q, wav, "").listenOK(t)
			want := sttModelUUID
			if strings.HasPrefix(q, "model=base") { // the fast search (fastmodel.go)
				want = fastModelUUID
			}
			if r.Metadata.Models[0] != want {
				t.Errorf("models %v, want [%s]", r.Metadata.Models, want)
			}
		})
	}
	t.Run("tag and extra", func(t *testing.T) {
		q := url.Values{"tag": {"one", "two"}, "extra": {"k:v", "url:http://x:1/"}}
		r := postListen(t, q.Encode(), wav, "").listenOK(t)
		if !slices.Equal(r.Metadata.Tags, []string{"one", "two"}) {
			t.Errorf("tags %v", r.Metadata.Tags)
		}
		if len(r.Metadata.Extra) != 2 || r.Metadata.Extra["k"] != "v" || r.Metadata.Extra["url"] != "http://x:1/" {
			t.Errorf("extra %v", r.Metadata.Extra)
		}
	})
	t.Run("silence", func(t *testing.T) {
		r := postListen(t, "", wav, "").listenOK(t)
		alt := r.Results.Channels[0].Alternatives[0]
		if alt.Transcript != "" || alt.Words == nil || len(alt.Words) != 0 || alt.Confidence != 0 {
			t.Errorf("silence: %+v, want an empty transcript and words []", alt)
		}
	})
}

// TestBatchDiarizeOnSilence checks diarization and the other word-level
// options on audio without words.
func TestBatchDiarizeOnSilence(t *testing.T) {
	t.Parallel()
	wav := wavBytes(t, silence(t, 8000), 16000, 1)
	r := postListen(t, "diarize_model=latest&utterances=true&paragraphs=true&detect_entities=true", wav, "").listenOK(t)
	alt := r.Results.Channels[0].Alternatives[0]
	// (api.ListenResults drops an empty utterances list from the wire.)
	if r.Metadata.DiarizeInfo == nil || len(r.Results.Utterances) != 0 || alt.Transcript != "" || alt.Paragraphs != nil {
		t.Errorf("metadata %+v results %+v", r.Metadata, r.Results)
	}
}

// TestBatchTooLong checks that audio longer than the engine accepts is
// refused with 413 while it is decoded, not after.
func TestBatchTooLong(t *testing.T) {
	l := startEngine(t, Config{MaxAudioDuration: time.Second, Recognizer: RecognizerConfig{Warm: -1}})
	wav := wavBytes(t, silence(t, 3*16000), 16000, 1)
	a := do(t, l, http.MethodPost, api.PathListen, tokenAuth(l), wav, nil)
	a.wantError(t, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge, "")
	if msg := a.legacy(t).ErrMsg; !strings.Contains(msg, "too long") || !strings.Contains(msg, "1s") {
		t.Errorf("err_msg %q: want it to say the audio is too long and the limit", msg)
	}
}
