package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/internal/testkit"
)

// What the LibriVox reader says in the clips the multichannel tests use
// (pocketsphinx-testdata's transcription file).
var clipTranscripts = map[string]string{
	"0870": "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
	"0880": "he was not an ill disposed young man",
	"0930": "he might even have been made amiable himself",
}

// placed returns seconds of audio: background noise, with clip id
// starting at the given second (none when id is empty).
func placed(t *testing.T, id string, at, seconds float64) []int16 {
	t.Helper()
	out := silence(t, int(seconds*16000))
	if id != "" {
		copy(out[int(at*16000):], clipSamples(t, id))
	}
	return out
}

// placedPart returns seconds of background noise with the first part
// seconds of clip id starting at the given second.
func placedPart(t *testing.T, id string, part, at, seconds float64) []int16 {
	t.Helper()
	out := silence(t, int(seconds*16000))
	copy(out[int(at*16000):], clipSamples(t, id)[:int(part*16000)])
	return out
}

// interleave makes frames of interleaved channels of equal length.
func interleave(chans ...[]int16) []int16 {
	out := make([]int16, 0, len(chans)*len(chans[0]))
	for i := range chans[0] {
		for _, ch := range chans {
			out = append(out, ch[i])
		}
	}
	return out
}

// multi are the options of a multichannel stream of n raw 16 kHz channels.
func multi(n int, o api.ListenOptions) api.ListenOptions {
	o.Multichannel, o.Channels = true, n
	return linear16(o)
}

// streamAll streams pcm in 100 ms frames of its channels, then
// CloseStream, and reads the stream to its end.
func streamAll(ctx context.Context, s *api.ListenStream, pcm []int16, channels int) ([]api.ListenMessage, error) {
	if err := streamAudio(ctx, s, pcmBytes(pcm), 3200*channels, 0); err != nil {
		return nil, err
	}
	if err := s.CloseStream(ctx); err != nil {
		return nil, err
	}
	msgs, err := drain(ctx, s)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return msgs, err
}

// ofChannel returns the messages of a multichannel stream about channel
// c of n, as a stream of that channel alone would have sent them
// (channel_index [0, 1]), followed by the Metadata that ends the stream,
// so that checkResults checks each channel's invariants. Messages about
// another channel must say which, within n.
func ofChannel(t *testing.T, msgs []api.ListenMessage, c, n int) []api.ListenMessage {
	t.Helper()
	var out []api.ListenMessage
	for _, m := range msgs {
		var idx []int
		switch m := m.(type) {
		case *api.Results:
			idx = m.ChannelIndex
		case *api.UtteranceEnd:
			idx = m.Channel
		case *api.SpeechStarted:
			idx = m.Channel
		case *api.Metadata:
			out = append(out, m)
			continue
		default:
			continue
		}
		if len(idx) != 2 || idx[1] != n || idx[0] < 0 || idx[0] >= n {
			t.Errorf("%s about channel %v, want [c, %d]", m.MessageType(), idx, n)
			continue
		}
		if r, ok := m.(*api.Results); ok && idx[0] == c {
			own := *r
			own.ChannelIndex = []int{0, 1}
			out = append(out, &own)
		}
	}
	return out
}

// finalWords returns the words of the finals of msgs.
func finalWords(msgs []api.ListenMessage) []api.Word {
	var out []api.Word
	for _, r := range finals(msgs) {
		out = append(out, r.Channel.Alternatives[0].Words...)
	}
	return out
}

// attributed returns how many of got are words of want: the same word
// starting at the same time (within 10 ms) and ending within 100 ms (the
// last word of a recording may stretch into the silence after it), each
// word of want taken once.
func attributed(got, want []api.Word) int {
	used := make([]bool, len(want))
	n := 0
	for _, g := range got {
		for j, w := range want {
			if !used[j] && g.Word == w.Word && math.Abs(g.Start-w.Start) <= 0.01 && math.Abs(g.End-w.End) <= 0.1 {
				used[j] = true
				n++
				break
			}
		}
	}
	return n
}

// lcsShare is the share of the words of got that a longest common
// subsequence finds in the transcript want.
func lcsShare(got []api.Word, want string) float64 {
	x := make([]string, len(got))
	for i, w := range got {
		x[i] = w.Word
	}
	if len(x) == 0 {
		return 0
	}
	return float64(testkit.CommonWords(x, testkit.Words(want))) / float64(len(x))
}

// checkMetadataOnce checks that msgs end with the one Metadata of a
// stream of n channels and about seconds of audio.
func checkMetadataOnce(t *testing.T, msgs []api.ListenMessage, n int, seconds float64) {
	t.Helper()
	count := 0
	for _, m := range msgs {
		if _, ok := m.(*api.Metadata); ok {
			count++
		}
	}
	if count != 1 || len(msgs) == 0 {
		t.Fatalf("%d Metadata messages, want 1: %v", count, types(msgs))
	}
	md, ok := msgs[len(msgs)-1].(*api.Metadata)
	if !ok {
		t.Fatalf("the last message is %s, want Metadata", msgs[len(msgs)-1].MessageType())
	}
	if md.Channels != n || math.Abs(md.Duration-seconds) > 0.01 || len(md.Models) != 1 {
		t.Errorf("Metadata %+v: want %d channels, %v s", md, n, seconds)
	}
}

// TestStreamMultichannelWords streams two channels, each carrying its own
// recording, from the start: both speak, then channel 1 is silent while
// channel 0 reads on. Each channel's finals must hold that channel's words
// at that channel's times: those the engine recognises in its recording
// alone (batch, whose segmentation endpointing=500 gives a stream, as
// TestStreamMatchesBatch checks), and the words of its recording's
// transcript rather than the other's.
func TestStreamMultichannelWords(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	const seconds = 7.5
	ids := []string{"0870", "0880"}
	pcm := interleave(placed(t, ids[0], 0, seconds), placed(t, ids[1], 0, seconds))
	s := openStream(t, ctx, shared, multi(2, api.ListenOptions{InterimResults: true, Punctuate: true, Endpointing: 500}))
	msgs, err := streamAll(ctx, s, pcm, 2)
	if err != nil {
		t.Fatalf("%v after %v", err, types(msgs))
	}
	checkMetadataOnce(t, msgs, 2, seconds)
	interims := 0
	for c, id := range ids {
		got := ofChannel(t, msgs, c, 2)
		checkResults(t, got, s.RequestID())
		for _, m := range got {
			if r, ok := m.(*api.Results); ok && !r.IsFinal {
				interims++
			}
		}
		words, ref := finalWords(got), batchTranscript(t, id).Results.Channels[0].Alternatives[0].Words
		n := attributed(words, ref)
		own, other := lcsShare(words, clipTranscripts[id]), lcsShare(words, clipTranscripts[ids[1-c]])
		t.Logf("channel %d: %d words, %d (%.1f%%) those of its recording alone (%d); %.0f%% found in its recording's transcript, %.0f%% in the other's",
			c, len(words), n, 100*float64(n)/float64(max(len(words), 1)), len(ref), 100*own, 100*other)
		if float64(n) < 0.95*float64(len(words)) || float64(n) < 0.95*float64(len(ref)) {
			t.Errorf("channel %d: %d of its %d words are the %d of its recording alone\nstream: %v\nalone:  %v",
				c, n, len(words), len(ref), words, ref)
		}
		if own < 0.6 || own <= other {
			t.Errorf("channel %d %q: %.2f of its words in its recording's transcript, %.2f in the other's", c, joinFinals(got), own, other)
		}
	}
	if interims == 0 {
		t.Error("no interim results")
	}
}

// dialMulti opens a raw multichannel stream of n linear16 channels on the
// shared engine with extra query parameters.
func dialMulti(t *testing.T, ctx context.Context, n int, query string) *websocket.Conn {
	t.Helper()
	conn, a := dialRaw(t, ctx, shared, fmt.Sprintf("encoding=linear16&sample_rate=16000&multichannel=true&channels=%d&%s", n, query), nil)
	if conn == nil {
		t.Fatalf("handshake refused: %d %s", a.status, a.body)
	}
	return conn
}

// nextMessage reads one message of a raw stream.
func nextMessage(ctx context.Context, conn *websocket.Conn) (api.ListenMessage, error) {
	_, data, err := conn.Read(ctx)
	if err != nil {
		return nil, err
	}
	return api.DecodeListenMessage(data)
}

// The first 1.7 s of clips 0880 and 0930, which end with a word, and
// where their speech lies.
const partSeconds = 1.7

var partSpeech = map[string][2]float64{
	"0880": {0.21, 1.68}, // he was not an illness
	"0930": {0.2, 1.67},  // he might even have been made
}

// checkSpan checks that the words of channel c lie within its speech,
// which starts at the given second of the stream, and reach its end.
func checkSpan(t *testing.T, c int, words []api.Word, id string, at float64) {
	t.Helper()
	from, to := partSpeech[id][0]+at, partSpeech[id][1]+at
	if len(words) < 3 || words[len(words)-1].End < to-0.3 {
		t.Errorf("channel %d: words %v, want those of its speech, %v to %v s", c, words, from, to)
	}
	for _, w := range words {
		if w.Start < from-0.15 || w.End > to+0.15 {
			t.Errorf("channel %d: word %+v outside its speech, %v to %v s", c, w, from, to)
		}
	}
}

// TestStreamMultichannelFinalizeAndClose checks Finalize on every channel
// and on one, and that CloseStream right after the audio brings every
// channel's last words (channel 1 speaks to the end), then one Metadata.
func TestStreamMultichannelFinalizeAndClose(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	const seconds = 2.3
	ids := []string{"0880", "0930"}
	offsets := []float64{0, 0.6}
	pcm := interleave(placedPart(t, ids[0], partSeconds, offsets[0], seconds), placedPart(t, ids[1], partSeconds, offsets[1], seconds))
	conn := dialMulti(t, ctx, 2, "punctuate=true")
	send := func(typ websocket.MessageType, b []byte) {
		t.Helper()
		if err := conn.Write(ctx, typ, b); err != nil {
			t.Fatal(err)
		}
	}
	var all []api.ListenMessage
	// answers reads until the Finalize answers of want (channel: count)
	// have come.
	answers := func(want map[int]int) {
		t.Helper()
		got := map[int]int{}
		for !covers(got, want) {
			m, err := nextMessage(ctx, conn)
			if err != nil {
				t.Fatalf("Finalize answers %v of %v, then %v: %v", got, want, err, types(all))
			}
			all = append(all, m)
			if r, ok := m.(*api.Results); ok && r.FromFinalize {
				got[r.ChannelIndex[0]]++
				if want[r.ChannelIndex[0]] == 0 {
					t.Errorf("a Finalize answer on channel %v, want %v", r.ChannelIndex, want)
				}
			}
		}
	}
	// Mid speech on both channels.
	cut := 2 * int(1.3*16000)
	for off := 0; off < cut; off += 3200 {
		send(websocket.MessageBinary, pcmBytes(pcm[off:min(off+3200, cut)]))
	}
	send(websocket.MessageText, []byte(`{"type":"Finalize"}`))
	answers(map[int]int{0: 1, 1: 1})
	for c := range 2 {
		if len(finalWords(ofChannel(t, all, c, 2))) == 0 {
			t.Errorf("channel %d: no words by the Finalize answer: %v", c, types(all))
		}
	}
	send(websocket.MessageText, []byte(`{"type":"Finalize","channel":1}`))
	answers(map[int]int{1: 1})
	send(websocket.MessageText, []byte(`{"type":"Finalize","channel":2}`))
	if m, err := nextMessage(ctx, conn); err != nil {
		t.Fatal(err)
	} else if e, ok := m.(*api.StreamError); !ok || e.Variant != "SchemaError" || !strings.Contains(e.Description, "channel 2") {
		t.Errorf("Finalize of channel 2 of 2 answered %+v, want an Error", m)
	}
	send(websocket.MessageText, []byte(`{"type":"KeepAlive"}`))

	// The rest, and CloseStream right after it.
	for off := cut; off < len(pcm); off += 3200 {
		send(websocket.MessageBinary, pcmBytes(pcm[off:min(off+3200, len(pcm))]))
	}
	send(websocket.MessageText, []byte(`{"type":"CloseStream"}`))
	for {
		m, err := nextMessage(ctx, conn)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("closed with %v after %v", err, types(all))
			}
			break
		}
		all = append(all, m)
	}
	checkMetadataOnce(t, all, 2, seconds)
	rid := all[len(all)-1].(*api.Metadata).RequestID
	for c, id := range ids {
		got := ofChannel(t, all, c, 2)
		checkResults(t, got, rid)
		t.Logf("channel %d: %q", c, joinFinals(got))
		fins := finals(got)
		if len(fins) == 0 || fins[len(fins)-1].FromFinalize {
			t.Errorf("channel %d: the last final answers Finalize: %v", c, types(got))
		}
		checkSpan(t, c, finalWords(got), id, offsets[c])
	}
}

// covers reports whether got holds want.
func covers(got, want map[int]int) bool {
	for k, v := range want {
		if got[k] < v {
			return false
		}
	}
	return true
}

// TestStreamMultichannelThree streams three channels: a reader on
// channels 0 and 1, partly at once, and silence on channel 2. Voice
// events, utterance ends and speaker labels come per channel: each
// channel's diarization counts its own speakers from 0.
func TestStreamMultichannelThree(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	const seconds = 3.7
	ids := []string{"0930", "0880"}
	offsets := []float64{0, 0.8}
	pcm := interleave(placedPart(t, ids[0], partSeconds, offsets[0], seconds), placedPart(t, ids[1], partSeconds, offsets[1], seconds),
		silence(t, int(seconds*16000)))
	s := openStream(t, ctx, shared, multi(3, api.ListenOptions{
		DiarizeModel: "latest", VADEvents: true, InterimResults: true, UtteranceEndMs: 1000, SmartFormat: true,
	}))
	msgs, err := streamAll(ctx, s, pcm, 3)
	if err != nil {
		t.Fatalf("%v after %v", err, types(msgs))
	}
	checkMetadataOnce(t, msgs, 3, seconds)
	started := map[int]bool{}
	ended := map[int][]float64{}
	for _, m := range msgs {
		switch m := m.(type) {
		case *api.SpeechStarted:
			started[m.Channel[0]] = true
		case *api.UtteranceEnd:
			ended[m.Channel[0]] = append(ended[m.Channel[0]], m.LastWordEnd)
		}
	}
	for c := range 3 {
		got := ofChannel(t, msgs, c, 3)
		checkResults(t, got, s.RequestID())
		words := finalWords(got)
		t.Logf("channel %d: %q", c, joinFinals(got))
		if c == 2 {
			// The detector may take the noise for speech, but nothing
			// is recognised.
			if len(words) > 0 || len(ended[c]) > 0 {
				t.Errorf("channel 2 is silent: words %q, UtteranceEnd %v", joinFinals(got), ended[c])
			}
			continue
		}
		checkSpan(t, c, words, ids[c], offsets[c])
		if len(words) == 0 {
			continue
		}
		if !started[c] {
			t.Errorf("channel %d: no SpeechStarted", c)
		}
		for i, w := range words {
			if w.Speaker == nil || i == 0 && *w.Speaker != 0 {
				t.Errorf("channel %d: word %d %+v, want a speaker, 0 first", c, i, w)
			}
		}
		if last := words[len(words)-1].End; !slices.Equal(ended[c], []float64{last}) {
			t.Errorf("channel %d: UtteranceEnd at %v, its last word ends at %v", c, ended[c], last)
		}
	}
}

// TestStreamMultichannelContainer streams a stereo WAV file with
// multichannel=true: the channels are known from its header, and each is
// recognised apart. Channel 0 speaks first, channel 1 once it is done:
// each channel's words must lie within its own speech.
func TestStreamMultichannelContainer(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	const seconds = 3.8
	ids := []string{"0930", "0880"}
	offsets := []float64{0, 1.9}
	stereo := wavBytes(t, interleave(placedPart(t, ids[0], partSeconds, offsets[0], seconds),
		placedPart(t, ids[1], partSeconds, offsets[1], seconds)), 16000, 2)
	s := openStream(t, ctx, shared, api.ListenOptions{Multichannel: true})
	if err := streamAudio(ctx, s, stereo, 8000, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	msgs, err := drain(ctx, s)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("%v after %v", err, types(msgs))
	}
	checkMetadataOnce(t, msgs, 2, seconds)
	for c, id := range ids {
		got := ofChannel(t, msgs, c, 2)
		checkResults(t, got, s.RequestID())
		t.Logf("channel %d: %q", c, joinFinals(got))
		checkSpan(t, c, finalWords(got), id, offsets[c])
	}
}

// TestStreamMultichannelRefused checks the handshakes refused for their
// channels, in the service's error shape, and that a multichannel stream
// takes a place of the allowance for each channel.
func TestStreamMultichannelRefused(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	raw := "encoding=linear16&sample_rate=16000&multichannel=true&"
	l := routingEngine(t, Config{MaxConnections: 3})
	for _, tc := range []struct {
		name  string
		l     *Local
		query string
		msg   string
	}{
		{"more channels than a stream may have", shared, "channels=9",
			"A multichannel stream of 9 channels is refused: the local engine recognises at most 8 channels of a stream, each with a recogniser of its own."},
		{"more channels than the service takes", shared, "channels=33", "channels 33 is out of range (1 to 32)"},
		{"more than the allowance", l, "channels=4",
			"A multichannel stream of 4 channels is refused: it takes 4 of the local engine's concurrency allowance of 3 (a recogniser per channel, and what its features take)."},
		{"diarized, more than the allowance", l, "channels=2&diarize_model=latest",
			"A multichannel stream of 2 channels is refused: it takes 4 of the local engine's concurrency allowance of 3 (a recogniser per channel, and what its features take)."},
	} {
		conn, a := dialRaw(t, ctx, tc.l, raw+tc.query, nil)
		if conn != nil {
			t.Fatalf("%s: handshake accepted", tc.name)
		}
		a.wantError(t, http.StatusBadRequest, api.CodeBadRequest, "")
		if got := a.legacy(t).ErrMsg; !strings.HasSuffix(got, tc.msg) {
			t.Errorf("%s: err_msg %q, want %q", tc.name, got, tc.msg)
		}
	}
	if n := l.Engine.limit.inUse(); n != 0 {
		t.Fatalf("%d places in use after refused handshakes", n)
	}

	// Two channels take two places, and a second stream of two does not
	// fit in the one left.
	two, _ := dialRaw(t, ctx, l, raw+"channels=2", nil)
	if two == nil {
		t.Fatal("handshake refused")
	}
	if n := l.Engine.limit.inUse(); n != 2 {
		t.Errorf("%d places in use by a stream of two channels, want 2", n)
	}
	conn, a := dialRaw(t, ctx, l, raw+"channels=2", nil)
	if conn != nil {
		t.Fatal("a stream of two channels accepted with one place left")
	}
	a.wantError(t, http.StatusTooManyRequests, api.CodeTooManyRequests, "")

	// A WAV file whose header announces two channels, on the last place:
	// its second recogniser does not fit, and the stream is closed so.
	wav, _ := dialRaw(t, ctx, l, "multichannel=true", nil)
	if wav == nil {
		t.Fatal("handshake refused")
	}
	stereo := wavBytes(t, interleave(placed(t, "0880", 0, 0.5), placed(t, "", 0, 0.5)), 16000, 2)
	if err := wav.Write(ctx, websocket.MessageBinary, stereo); err != nil {
		t.Fatal(err)
	}
	_, _, err := wav.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater || !strings.Contains(err.Error(), "TOO_MANY_REQUESTS") {
		t.Errorf("stereo WAV on the last place: %v, want a close with 1013 TOO_MANY_REQUESTS", err)
	}
	if err := two.Write(ctx, websocket.MessageText, []byte(`{"type":"CloseStream"}`)); err != nil {
		t.Fatal(err)
	}
	msgs, err := readRaw(ctx, two)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure || len(msgs) != 1 {
		t.Errorf("CloseStream: %v, %v", rawTypes(msgs), err)
	}
}

// Queries of a fuzzed multichannel stream, and how many channels each
// has (0: known from the container).
var fuzzMultichannelQueries = []struct {
	query    string
	channels int
}{
	{"encoding=linear16&sample_rate=16000&multichannel=true&channels=2", 2},
	{"encoding=mulaw&sample_rate=8000&multichannel=true&channels=3&interim_results=true&vad_events=true&utterance_end_ms=1000", 3},
	{"multichannel=true&punctuate=true", 0},
	{"encoding=linear32&sample_rate=8000&multichannel=true&channels=2&diarize_model=latest&endpointing=false&smart_format=true&detect_entities=true", 2},
}

// FuzzStreamMultichannel sends arbitrary sequences of frames (see
// fuzzFrames) on multichannel /v1/listen sockets of raw and containerized
// audio, Finalize naming any channel among them: the engine must never
// panic, must answer only with messages of the interface, each about a
// channel of the stream, and must end the stream with a close frame.
func FuzzStreamMultichannel(f *testing.F) {
	// The shared engine's recognisers are loaded; its handler is served
	// in process here, so that a panic reaches the fuzzer.
	eng := shared.Engine
	var panicked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				panicked.Store(fmt.Sprintf("%v\n%s", p, debug.Stack()))
			}
		}()
		eng.Handler().ServeHTTP(w, r)
	}))
	f.Cleanup(srv.Close)
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + api.PathListen

	speech := clipSamples(f, "0880")[2400:7200]
	stereo := pcmBytes(interleave(speech[:3200], speech[1600:4800]))
	frame := func(op byte, b []byte) []byte { return append([]byte{op, byte((len(b) - 1) / 16)}, b...) }
	text := func(s string) []byte { return append([]byte{2, byte(len(s))}, s...) }
	// Operations of fuzzFrames: binary frames of 16k+1 bytes, text frames,
	// and the controls KeepAlive, Finalize and CloseStream, and the
	// zero-length frame.
	const keepAlive, finalize, closeStream, zero = 3, 3 + 5, 3 + 10, 4
	f.Add(uint8(0), slices.Concat(frame(0, stereo[:4001]), frame(1, stereo[4001:8002]), []byte{closeStream}))
	f.Add(uint8(0), slices.Concat(frame(0, stereo[:4001]), text(`{"type":"Finalize","channel":1}`), frame(1, stereo[4001:7970]), []byte{finalize, keepAlive}))
	f.Add(uint8(1), slices.Concat(frame(0, stereo[:3969]), text(`{"type":"Finalize","channel":-1}`), []byte{finalize}, text(`{"type":"Finalize","channel":2}`), []byte{zero}))
	f.Add(uint8(2), frame(0, wavBytes(f, interleave(speech[:1600], speech[1600:3200]), 16000, 2)[:4001]))
	f.Add(uint8(2), slices.Concat(frame(0, wavBytes(f, speech[:3200], 16000, 1)[:4001]), []byte{zero}))
	f.Add(uint8(3), slices.Concat(frame(0, stereo[:4001]), text(`{"type":"Finalize","channel":0}`), []byte{zero}))
	f.Add(uint8(1), []byte{0, 0, 0, 3, 2, 5, 'x'})

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		runMultichannelFrames(t, wsURL, mode, data)
		if p := panicked.Load(); p != nil {
			t.Fatalf("the engine panicked: %v", p)
		}
	})
}

// runMultichannelFrames plays the frames of fuzz data on a multichannel
// /v1/listen socket at wsURL and checks what the engine answers.
func runMultichannelFrames(t *testing.T, wsURL string, mode uint8, data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := fuzzMultichannelQueries[int(mode)%len(fuzzMultichannelQueries)]
	var conn *websocket.Conn
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, resp, err := websocket.Dial(ctx, wsURL+"?"+q.query, &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {tokenAuth(shared)}},
		})
		if err == nil {
			conn = c
			break
		}
		// The streams of the inputs before, and of the tests running
		// beside, may hold the places for a moment.
		if resp == nil || resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("handshake %q: %v (%v)", q.query, err, resp)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer conn.CloseNow()

	// inRange checks a channel pair of the stream's.
	inRange := func(idx []int) bool {
		if len(idx) != 2 || idx[0] < 0 || idx[0] >= idx[1] {
			return false
		}
		return idx[1] == q.channels || q.channels == 0 && idx[1] >= 1 && idx[1] <= maxStreamChannels
	}
	readDone := make(chan error, 1)
	go func() {
		for {
			typ, msg, err := conn.Read(ctx)
			if err != nil {
				readDone <- err
				return
			}
			if typ != websocket.MessageText {
				readDone <- errors.New("binary frame from the engine")
				return
			}
			m, err := api.DecodeListenMessage(msg)
			if err != nil {
				readDone <- fmt.Errorf("message %q: %w", msg, err)
				return
			}
			var idx []int
			switch m := m.(type) {
			case *api.Results:
				idx = m.ChannelIndex
			case *api.UtteranceEnd:
				idx = m.Channel
			case *api.SpeechStarted:
				idx = m.Channel
			case *api.Metadata, *api.StreamError:
				continue
			default:
				readDone <- fmt.Errorf("message of type %q: %s", m.MessageType(), msg)
				return
			}
			if !inRange(idx) {
				readDone <- fmt.Errorf("message about channel %v of a stream of %d: %s", idx, q.channels, msg)
				return
			}
		}
	}()
	for _, fr := range fuzzFrames(data) {
		if conn.Write(ctx, fr.typ, fr.data) != nil {
			break // the engine has closed the stream
		}
	}
	// Whatever was sent, a CloseStream ends a stream still open.
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"CloseStream"}`))
	err := <-readDone
	switch code := websocket.CloseStatus(err); code {
	case websocket.StatusNormalClosure, websocket.StatusPolicyViolation, websocket.StatusInternalError:
	default:
		t.Fatalf("stream %q ended with %v (close code %d), want a close frame", q.query, err, code)
	}
}

// FuzzChannelSplitter splits arbitrary raw audio of 1 to maxStreamChannels
// interleaved channels, decoded in chunks cut anywhere (within frames and
// samples too): each channel must come out as converting it alone at once
// gives, and the mix as mixing all at once gives.
func FuzzChannelSplitter(f *testing.F) {
	stereo := pcmBytes(interleave(clipSamples(f, "0880")[:4000], clipSamples(f, "0930")[:4000]))
	f.Add(uint8(1), uint8(1), true, stereo, []byte{0, 2, 254, 255, 17})
	f.Add(uint8(2), uint8(2), true, stereo[:999], []byte{1})
	f.Add(uint8(1), uint8(3), false, stereo, []byte{3, 3, 3})
	f.Add(uint8(7), uint8(0), true, stereo[:3001], []byte{})
	f.Fuzz(checkSplitter)
}

// checkSplitter is FuzzChannelSplitter's check of one input.
func checkSplitter(t *testing.T, chans, rate uint8, apart bool, data, cuts []byte) {
	n := int(chans)%maxStreamChannels + 1
	format := audio.Format{Encoding: audio.EncodingLinear16, SampleRate: []int{8000, 16000, 44100, 48000}[rate%4], Channels: n}
	dec, err := audio.NewStreamDecoder(format)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	info, _ := dec.Info()
	sp, err := newChannelSplitter(info, apart)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]int16, len(sp.convs))
	for i, off := 0, 0; off < len(data); i++ {
		size := len(data) - off
		if i < len(cuts) {
			size = min(int(cuts[i])+1, size)
		}
		samples, err := dec.Decode(data[off : off+size])
		if err != nil {
			t.Skip("not raw audio:", err) // it starts like a container
		}
		off += size
		for c, pcm := range sp.split(samples) {
			got[c] = append(got[c], pcm...)
		}
	}
	tail, err := dec.Flush()
	if err != nil {
		t.Skip("not raw audio:", err)
	}
	for c, pcm := range sp.flush(tail) {
		got[c] = append(got[c], pcm...)
	}

	whole := data[:len(data)/format.FrameSize()*format.FrameSize()]
	all := audio.DecodePCM(nil, whole, audio.EncodingLinear16)
	if !apart {
		conv, err := audio.NewConverter16kMono(format.SampleRate, n)
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(conv.Convert(all)), conv.Flush()...)
		if len(got) != 1 || !slices.Equal(got[0], want) {
			t.Fatalf("mix of %d channels: %d samples, want %d", n, len(got[0]), len(want))
		}
		return
	}
	if len(got) != n {
		t.Fatalf("%d channels split, want %d", len(got), n)
	}
	for c := range n {
		var ch []float32
		for i := c; i < len(all); i += n {
			ch = append(ch, all[i])
		}
		conv, err := audio.NewConverter16kMono(format.SampleRate, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(conv.Convert(ch)), conv.Flush()...)
		if !slices.Equal(got[c], want) {
			t.Fatalf("channel %d of %d: %d samples, want %d", c, n, len(got[c]), len(want))
		}
	}
}
