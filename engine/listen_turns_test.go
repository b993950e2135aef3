package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/engine/sphinx"
	"github.com/earshot-app/earshot/engine/turn"
)

// turnConn is a raw /v2/listen connection for tests: it sends anything,
// and a reader goroutine, stopped and waited for at the end of the test,
// decodes what the engine sends.
type turnConn struct {
	conn *websocket.Conn
	msgs chan api.TurnMessage
	raw  chan []byte
	// times holds when each message arrived, in step with msgs.
	times chan time.Time
	done  chan struct{}
	err   error // why reading ended; read after done
}

// dialTurns opens /v2/listen on l with a raw query. On a refused
// handshake it returns the answer instead.
func dialTurns(t testing.TB, ctx context.Context, l *Local, rawQuery string) (*turnConn, *answer) {
	t.Helper()
	conn, a := dialPath(t, ctx, l, api.PathListenV2, rawQuery, nil)
	if conn == nil {
		return nil, a
	}
	conn.SetReadLimit(maxFrameBytes)
	tc := &turnConn{conn: conn, msgs: make(chan api.TurnMessage, 4096), raw: make(chan []byte, 4096),
		times: make(chan time.Time, 4096), done: make(chan struct{})}
	go func() {
		defer close(tc.done)
		defer close(tc.msgs)
		defer close(tc.raw)
		defer close(tc.times)
		for {
			typ, data, err := conn.Read(context.Background())
			if err != nil {
				tc.err = err
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			m, err := api.DecodeTurnMessage(data)
			if err != nil {
				tc.err = fmt.Errorf("undecodable message %s: %w", data, err)
				return
			}
			tc.times <- time.Now()
			tc.raw <- data
			tc.msgs <- m
		}
	}()
	t.Cleanup(func() {
		conn.CloseNow()
		<-tc.done
	})
	return tc, nil
}

func openTurns(t testing.TB, ctx context.Context, l *Local, rawQuery string) *turnConn {
	t.Helper()
	tc, a := dialTurns(t, ctx, l, rawQuery)
	if a != nil {
		t.Fatalf("handshake refused: %d %s", a.status, a.body)
	}
	return tc
}

// sendAudio sends pcm in frames of 100 ms, as fast as the socket takes
// them.
func (tc *turnConn) sendAudio(t testing.TB, ctx context.Context, pcm []int16) {
	t.Helper()
	b := pcmBytes(pcm)
	const frame = 3200
	for off := 0; off < len(b); off += frame {
		if err := tc.conn.Write(ctx, websocket.MessageBinary, b[off:min(off+frame, len(b))]); err != nil {
			t.Fatalf("send audio: %v", err)
		}
	}
}

func (tc *turnConn) sendText(t testing.TB, ctx context.Context, msg string) {
	t.Helper()
	if err := tc.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("send %s: %v", msg, err)
	}
}

// until reads messages until one satisfies stop, and returns them all.
func (tc *turnConn) until(t testing.TB, ctx context.Context, what string, stop func(api.TurnMessage) bool) []api.TurnMessage {
	t.Helper()
	var got []api.TurnMessage
	for {
		select {
		case m, ok := <-tc.msgs:
			if !ok {
				t.Fatalf("stream ended (%v) before %s; messages %v", tc.err, what, turnTypes(got))
			}
			got = append(got, m)
			if stop(m) {
				return got
			}
		case <-ctx.Done():
			t.Fatalf("no %s before the deadline; messages %v", what, turnTypes(got))
		}
	}
}

// drainTurns reads to the end of the stream.
func (tc *turnConn) drain(t testing.TB, ctx context.Context) ([]api.TurnMessage, error) {
	t.Helper()
	var got []api.TurnMessage
	for {
		select {
		case m, ok := <-tc.msgs:
			if !ok {
				return got, tc.err
			}
			got = append(got, m)
		case <-ctx.Done():
			t.Fatalf("stream not closed before the deadline; messages %v", turnTypes(got))
		}
	}
}

func isEvent(e api.TurnEvent) func(api.TurnMessage) bool {
	return func(m api.TurnMessage) bool {
		ti, ok := m.(*api.TurnInfo)
		return ok && ti.Event == e
	}
}

func isType(typ string) func(api.TurnMessage) bool {
	return func(m api.TurnMessage) bool { return m.MessageType() == typ }
}

func turnTypes(ms []api.TurnMessage) []string {
	var out []string
	for _, m := range ms {
		s := m.MessageType()
		if ti, ok := m.(*api.TurnInfo); ok {
			if ti.Event == api.EventUpdate {
				continue
			}
			s = fmt.Sprintf("%s#%d@%.2f", ti.Event, ti.TurnIndex, ti.AudioWindowEnd)
			if ti.Trigger != "" {
				s += "(" + string(ti.Trigger) + ")"
			}
		}
		out = append(out, s)
	}
	return out
}

func turnInfos(ms []api.TurnMessage, e api.TurnEvent) []*api.TurnInfo {
	var out []*api.TurnInfo
	for _, m := range ms {
		if ti, ok := m.(*api.TurnInfo); ok && (e == "" || ti.Event == e) {
			out = append(out, ti)
		}
	}
	return out
}

// span is where a clip lies in joined audio, in seconds.
type span struct {
	id         string
	start, end float64
}

// joinClips joins LibriVox clips with the recording's background noise:
// lead before the first, gaps[i] after clip i.
func joinClips(t testing.TB, lead float64, ids []string, gaps []float64) ([]int16, []span) {
	t.Helper()
	n := func(s float64) int { return int(s * 16000) }
	pcm := silence(t, n(lead))
	var spans []span
	for i, id := range ids {
		c := clipSamples(t, id)
		start := float64(len(pcm)) / 16000
		pcm = append(pcm, c...)
		spans = append(spans, span{id, start, float64(len(pcm)) / 16000})
		pcm = append(pcm, silence(t, n(gaps[i]))...)
	}
	return pcm, spans
}

// The must-show behaviour: on real speech with pauses, at the default
// threshold every gap of 1.5 s or more ends a turn, by the model, and no
// turn ends inside a clip, though the clips hold shorter pauses (0870
// pauses mid-sentence long enough for the voice detector to end an
// utterance).
func TestTurnsEndAtPauses(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	pcm, spans := joinClips(t, 0.5, []string{"0880", "0870", "0890", "0930", "0920"}, []float64{1.5, 2.0, 1.5, 1.6, 1.5})
	tc := openTurns(t, ctx, shared, "model=flux-general-en&encoding=linear16&sample_rate=16000")
	tc.sendAudio(t, ctx, pcm)
	tc.sendText(t, ctx, `{"type":"CloseStream"}`)
	msgs, err := tc.drain(t, ctx)
	if websocket.CloseStatus(err) != websocket.StatusNoStatusRcvd {
		t.Errorf("stream ended with %v, want a close without a status (1005) after CloseStream", err)
	}
	if len(msgs) == 0 || msgs[0].MessageType() != api.TypeConnected {
		t.Fatalf("messages %v: want Connected first", turnTypes(msgs))
	}
	checkSequence(t, tc)

	ends := turnInfos(msgs, api.EventEndOfTurn)
	starts := turnInfos(msgs, api.EventStartOfTurn)
	if len(ends) != len(spans) || len(starts) != len(spans) {
		t.Fatalf("%d StartOfTurn and %d EndOfTurn for %d clips: %v", len(starts), len(ends), len(spans), turnTypes(msgs))
	}
	for i, sp := range spans {
		st, end := starts[i], ends[i]
		if st.TurnIndex != i || end.TurnIndex != i {
			t.Errorf("clip %s: turn indices %d..%d, want %d", sp.id, st.TurnIndex, end.TurnIndex, i)
		}
		if st.AudioWindowEnd < sp.start || st.AudioWindowEnd > sp.start+1 {
			t.Errorf("clip %s from %.2f s: StartOfTurn at %.2f s", sp.id, sp.start, st.AudioWindowEnd)
		}
		t.Logf("clip %s ends at %.2f s; EndOfTurn %.2f s later, confidence %.3f: %q", sp.id, sp.end, end.AudioWindowEnd-sp.end, end.EndOfTurnConfidence, end.Transcript)
		// The turn ends in the gap after its clip, within a second of it.
		if end.AudioWindowEnd <= sp.end || end.AudioWindowEnd > sp.end+1 {
			t.Errorf("clip %s ends at %.2f s: EndOfTurn at %.2f s, want in the gap, within 1 s", sp.id, sp.end, end.AudioWindowEnd)
		}
		if end.Trigger != api.TriggerModel || end.EndOfTurnConfidence < api.DefaultEOTThreshold {
			t.Errorf("clip %s: trigger %q confidence %v, want model at >= 0.7", sp.id, end.Trigger, end.EndOfTurnConfidence)
		}
		if end.Transcript == "" || len(end.Words) == 0 {
			t.Errorf("clip %s: empty transcript", sp.id)
		}
		for _, w := range end.Words {
			if w.Start < sp.start-0.3 || w.End > sp.end+0.1 || w.Confidence < 0 || w.Confidence > 1 {
				t.Errorf("clip %s [%.2f, %.2f]: word %+v outside it", sp.id, sp.start, sp.end, w)
			}
		}
		if got := strings.Join(wordsOfTurn(end), " "); got != end.Transcript {
			t.Errorf("transcript %q, words %q", end.Transcript, got)
		}
	}
	if !strings.Contains(ends[0].Transcript, "young man") {
		t.Errorf("first turn %q: want the recognised clip 0880 (\"he was not an ill disposed young man\")", ends[0].Transcript)
	}
	checkUpdates(t, msgs)
}

func wordsOfTurn(ti *api.TurnInfo) []string {
	var out []string
	for _, w := range ti.Words {
		out = append(out, w.Word)
	}
	return out
}

// checkSequence checks that sequence_id counts every message from 0.
func checkSequence(t *testing.T, tc *turnConn) {
	t.Helper()
	i := 0
	for data := range tc.raw {
		var m struct {
			SequenceID *int `json:"sequence_id"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.SequenceID == nil || *m.SequenceID != i {
			t.Errorf("message %d %s: want sequence_id %d", i, data, i)
			return
		}
		i++
	}
}

// checkUpdates checks that inside a turn an event arrives about every
// 0.25 s of audio, with a transcript that only grows until speech ends.
func checkUpdates(t *testing.T, msgs []api.TurnMessage) {
	t.Helper()
	var prev *api.TurnInfo
	updates := 0
	for _, ti := range turnInfos(msgs, "") {
		if ti.Event == api.EventUpdate {
			updates++
		}
		if prev != nil && prev.Event != api.EventEndOfTurn {
			if gap := ti.AudioWindowEnd - prev.AudioWindowEnd; gap > 0.26 {
				t.Errorf("%s at %.3f s, %.3f s after the previous event of the turn: want one every 0.25 s", ti.Event, ti.AudioWindowEnd, gap)
			}
			if ti.TurnIndex != prev.TurnIndex {
				t.Errorf("turn index %d inside turn %d", ti.TurnIndex, prev.TurnIndex)
			}
		}
		prev = ti
	}
	if updates < 20 {
		t.Errorf("%d Updates over about 25 s of speech", updates)
	}
}

// ForceEndTurn outside a turn is a Warning and the stream goes on; inside
// one it ends the turn at once, with trigger manual, and the next speech
// starts the next turn.
func TestTurnsForceEndTurn(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	tc := openTurns(t, ctx, shared, "model=flux-general-en&encoding=linear16&sample_rate=16000")
	tc.until(t, ctx, "Connected", isType(api.TypeConnected))

	tc.sendAudio(t, ctx, silence(t, 16000))
	tc.sendText(t, ctx, `{"type":"ForceEndTurn"}`)
	got := tc.until(t, ctx, "Warning", isType(api.TypeWarning))
	w := got[len(got)-1].(*api.TurnWarning)
	if w.Code != api.CodeForceEndTurnNoActive || w.Description == "" || len(got) != 1 {
		t.Errorf("outside a turn: %v %+v, want only a Warning %s", turnTypes(got), w, api.CodeForceEndTurnNoActive)
	}

	clip := clipSamples(t, "0870")
	tc.sendAudio(t, ctx, clip[:2*16000]) // two seconds into a sentence
	tc.sendText(t, ctx, `{"type":"ForceEndTurn"}`)
	got = tc.until(t, ctx, "EndOfTurn", isEvent(api.EventEndOfTurn))
	end := got[len(got)-1].(*api.TurnInfo)
	if end.Trigger != api.TriggerManual || end.TurnIndex != 0 || end.Transcript == "" {
		t.Errorf("inside a turn: %+v, want EndOfTurn #0 with trigger manual and the words so far", end)
	}
	if end.AudioWindowEnd != 3.0 {
		t.Errorf("manual end at %.3f s, want at once, at the 3 s of audio sent", end.AudioWindowEnd)
	}
	if len(turnInfos(got, api.EventStartOfTurn)) != 1 {
		t.Errorf("messages %v: want one StartOfTurn before the manual end", turnTypes(got))
	}

	// The stream is still open: the rest of the sentence is a new turn.
	tc.sendAudio(t, ctx, clip[2*16000:])
	tc.sendAudio(t, ctx, silence(t, 2*16000))
	got = tc.until(t, ctx, "the next EndOfTurn", isEvent(api.EventEndOfTurn))
	end = got[len(got)-1].(*api.TurnInfo)
	if end.TurnIndex != 1 || end.Trigger != api.TriggerModel || end.AudioWindowStart < 2.9 {
		t.Errorf("after the manual end: %+v, want turn 1 from 3 s on, ended by the model", end)
	}
	tc.sendText(t, ctx, `{"type":"ForceEndTurn"}`)
	got = tc.until(t, ctx, "Warning", isType(api.TypeWarning))
	if len(got) != 1 {
		t.Errorf("ForceEndTurn after a turn ended: %v, want a Warning only", turnTypes(got))
	}
	tc.sendText(t, ctx, `{"type":"CloseStream"}`)
	if rest, err := tc.drain(t, ctx); websocket.CloseStatus(err) != websocket.StatusNoStatusRcvd || len(rest) != 0 {
		t.Errorf("CloseStream outside a turn: %v then %v, want nothing and a close without status", turnTypes(rest), err)
	}
}

// Configure applies whole or not at all, echoes the settings in force,
// and changes how the following turns end.
func TestTurnsConfigure(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	tc := openTurns(t, ctx, shared, "model=flux-general-en&encoding=linear16&sample_rate=16000")
	tc.sendAudio(t, ctx, silence(t, 8000))
	tc.sendAudio(t, ctx, clipSamples(t, "0880"))
	tc.sendAudio(t, ctx, silence(t, 24000))
	got := tc.until(t, ctx, "EndOfTurn", isEvent(api.EventEndOfTurn))
	if end := got[len(got)-1].(*api.TurnInfo); end.Trigger != api.TriggerModel {
		t.Fatalf("at the defaults a 1.5 s pause ends the turn by the model, not %+v", end)
	}

	for _, bad := range []string{
		`{"type":"Configure","thresholds":{"eot_threshold":"0.2"}}`,
		`{"type":"Configure","thresholds":{"eot_timeout_ms":"100"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":"0.6","eager_eot_threshold":"0.8"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":"soon"}}`,
		`{"type":"Configure","thresholds":"all"}`,
		`{"type":"Configure","keyterms":["Earshot"]}`,
		`{"type":"Configure","language_hints":["en"]}`,
		// Valid eot_threshold, invalid timeout: nothing is applied.
		`{"type":"Configure","thresholds":{"eot_threshold":"0.9","eot_timeout_ms":"70000"}}`,
	} {
		tc.sendText(t, ctx, bad)
		got := tc.until(t, ctx, "a Configure answer", func(m api.TurnMessage) bool {
			return m.MessageType() == api.TypeConfigureFailure || m.MessageType() == api.TypeConfigureSuccess
		})
		if got[len(got)-1].MessageType() != api.TypeConfigureFailure {
			t.Errorf("%s: %v, want ConfigureFailure", bad, turnTypes(got))
		}
	}
	// A valid Configure echoes every setting in force: what the refused
	// ones tried changed nothing.
	tc.sendText(t, ctx, `{"type":"Configure","thresholds":{"eot_timeout_ms":"1000"},"keyterms":[]}`)
	got = tc.until(t, ctx, "ConfigureSuccess", isType(api.TypeConfigureSuccess))
	wantEcho(t, got[len(got)-1], 0.7, 0, 1000)
	// The model's end of turn off: only the timeout ends turns now.
	tc.sendText(t, ctx, `{"type":"Configure","thresholds":{"eot_threshold":"1.0"}}`)
	got = tc.until(t, ctx, "ConfigureSuccess", isType(api.TypeConfigureSuccess))
	wantEcho(t, got[len(got)-1], 1.0, 0, 1000)

	tc.sendAudio(t, ctx, clipSamples(t, "0930"))
	const clipEnd = 0.5 + 2.99 + 1.5 + 3.29 // where 0930 ends in the stream
	tc.sendAudio(t, ctx, silence(t, 24000))
	got = tc.until(t, ctx, "EndOfTurn", isEvent(api.EventEndOfTurn))
	end := got[len(got)-1].(*api.TurnInfo)
	if end.Trigger != api.TriggerTimeout || end.TurnIndex != 1 {
		t.Errorf("after Configure: %+v, want turn 1 ended by the timeout", end)
	}
	// The timeout counts from the end of the last word, in blocks of
	// 128 ms.
	if lastWord := end.Words[len(end.Words)-1].End; end.AudioWindowEnd < lastWord+1 || end.AudioWindowEnd > lastWord+1.13 {
		t.Errorf("timeout at %.2f s, want 1 s after the last word, which ended at %.2f s", end.AudioWindowEnd, lastWord)
	}
	if end.AudioWindowEnd < clipEnd || end.AudioWindowEnd > clipEnd+1.5 {
		t.Errorf("timeout at %.2f s, want in the pause after the clip, which ended at %.2f s", end.AudioWindowEnd, clipEnd)
	}
	// Eager events on: EagerEndOfTurn comes first, with the same words.
	tc.sendText(t, ctx, `{"type":"Configure","thresholds":{"eot_threshold":"0.8","eager_eot_threshold":"0.4","eot_timeout_ms":"5000"}}`)
	got = tc.until(t, ctx, "ConfigureSuccess", isType(api.TypeConfigureSuccess))
	wantEcho(t, got[len(got)-1], 0.8, 0.4, 5000)
	tc.sendAudio(t, ctx, clipSamples(t, "0880"))
	tc.sendAudio(t, ctx, silence(t, 24000))
	got = tc.until(t, ctx, "EndOfTurn", isEvent(api.EventEndOfTurn))
	eager := turnInfos(got, api.EventEagerEndOfTurn)
	end = got[len(got)-1].(*api.TurnInfo)
	if len(eager) == 0 || eager[len(eager)-1].Transcript != end.Transcript || end.Trigger != api.TriggerModel {
		t.Errorf("with eager_eot_threshold: %v, want EagerEndOfTurn with the EndOfTurn's transcript", turnTypes(got))
	}
	for _, r := range turnInfos(got, api.EventTurnResumed) {
		if r.Transcript == "" {
			t.Errorf("TurnResumed %+v", r)
		}
	}
}

func wantEcho(t *testing.T, m api.TurnMessage, eot, eager float64, timeout int) {
	t.Helper()
	cs, ok := m.(*api.ConfigureSuccess)
	if !ok {
		t.Fatalf("%T, want ConfigureSuccess", m)
	}
	th := cs.Thresholds
	gotEager := 0.0
	if th.EagerEOTThreshold != nil {
		gotEager = *th.EagerEOTThreshold
	}
	if th.EOTThreshold == nil || *th.EOTThreshold != eot || gotEager != eager || th.EOTTimeoutMS == nil || *th.EOTTimeoutMS != timeout {
		b, _ := json.Marshal(cs)
		t.Errorf("ConfigureSuccess %s, want eot_threshold %v, eager %v, eot_timeout_ms %d", b, eot, eager, timeout)
	}
	if cs.Keyterms == nil || len(cs.Keyterms) != 0 {
		t.Errorf("keyterms %v, want []", cs.Keyterms)
	}
}

// CloseStream does not end the turn in progress: its last message is an
// Update, and the socket closes without a status.
func TestTurnsCloseStreamInTurn(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	tc := openTurns(t, ctx, shared, "model=flux-general-en&encoding=linear16&sample_rate=16000")
	tc.sendAudio(t, ctx, clipSamples(t, "0930")[:2*16000])
	tc.sendText(t, ctx, `{"type":"KeepAlive"}`) // tolerated, no answer
	tc.sendText(t, ctx, `{"type":"CloseStream"}`)
	msgs, err := tc.drain(t, ctx)
	if websocket.CloseStatus(err) != websocket.StatusNoStatusRcvd {
		t.Errorf("ended with %v, want 1005", err)
	}
	if len(turnInfos(msgs, api.EventEndOfTurn)) != 0 || len(turnInfos(msgs, api.EventStartOfTurn)) != 1 {
		t.Errorf("messages %v: want a turn started and not ended", turnTypes(msgs))
	}
	last, ok := msgs[len(msgs)-1].(*api.TurnInfo)
	if !ok || last.Event != api.EventUpdate || last.AudioWindowEnd != 2.0 || last.Transcript == "" {
		t.Errorf("last message %+v, want an Update of the turn over all 2 s of audio", msgs[len(msgs)-1])
	}
	for _, m := range msgs {
		if m.MessageType() == api.TypeWarning || m.MessageType() == api.TypeError {
			t.Errorf("unexpected %+v", m)
		}
	}
}

// A WAV file is detected from its header, like on /v1/listen, and
// messages that are not understood are warnings, never the end.
func TestTurnsContainerAndBadMessages(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	tc := openTurns(t, ctx, shared, "model=flux-general-en")
	for _, bad := range []string{`not json`, `{"type":"Finalize"}`, `[]`, `{"type":7}`} {
		tc.sendText(t, ctx, bad)
		got := tc.until(t, ctx, "Warning", isType(api.TypeWarning))
		if w := got[len(got)-1].(*api.TurnWarning); w.Code != api.CodeUnparsableClientMessage {
			t.Errorf("%s: warning %+v", bad, w)
		}
	}
	wav := wavBytes(t, append(clipSamples(t, "0880"), silence(t, 24000)...), 16000, 1)
	for off := 0; off < len(wav); off += 4000 {
		if err := tc.conn.Write(ctx, websocket.MessageBinary, wav[off:min(off+4000, len(wav))]); err != nil {
			t.Fatal(err)
		}
	}
	got := tc.until(t, ctx, "EndOfTurn", isEvent(api.EventEndOfTurn))
	if end := got[len(got)-1].(*api.TurnInfo); !strings.Contains(end.Transcript, "young man") {
		t.Errorf("WAV turn %q", end.Transcript)
	}
	// A zero-length frame closes the stream, as on /v1/listen.
	if err := tc.conn.Write(ctx, websocket.MessageBinary, []byte{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.drain(t, ctx); websocket.CloseStatus(err) != websocket.StatusNoStatusRcvd {
		t.Errorf("after an empty frame: %v", err)
	}
}

// Audio that does not match the declared encoding ends the stream with a
// fatal Error.
func TestTurnsUndecodable(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	tc := openTurns(t, ctx, shared, "model=flux-general-en&encoding=ogg-opus")
	wav := wavBytes(t, clipSamples(t, "0880")[:16000], 16000, 1)
	if err := tc.conn.Write(ctx, websocket.MessageBinary, wav); err != nil {
		t.Fatal(err)
	}
	msgs, err := tc.drain(t, ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("closed with %v, want 1008", err)
	}
	if e, ok := msgs[len(msgs)-1].(*api.TurnError); !ok || e.Code != api.CodeUndecodable {
		t.Errorf("messages %v, want a fatal Error %s last", turnTypes(msgs), api.CodeUndecodable)
	}
}

// The handshake refuses what the turn-aware models do not offer, with the
// service's status and code, before any socket opens.
func TestTurnsHandshakeRefusals(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	base := "model=flux-general-en&encoding=linear16&sample_rate=16000"
	for _, tc := range []struct {
		name, query string
		status      int
		code, msg   string
	}{
		{"smart_format", base + "&smart_format=true", 400, api.CodeBadRequest, "smart_format is not available on /v2/listen"},
		{"diarize_model", base + "&diarize_model=latest", 400, api.CodeBadRequest, "diarize_model is not available"},
		{"punctuate", base + "&punctuate=true", 400, api.CodeBadRequest, "punctuate is not available"},
		{"language_hint with flux-general-en", base + "&language_hint=en", 400, "", "flux-general-multi"},
		{"flux-general-multi", "model=flux-general-multi&encoding=linear16&sample_rate=16000", 400, api.CodeBadRequest, msgNoSuchModel},
		{"no model", "encoding=linear16&sample_rate=16000", 400, api.CodeBadRequest, "model is required"},
		{"model=flux", "model=flux", 400, api.CodeBadRequest, "model=flux is not a valid value"},
		{"continuous model", "model=nova-3", 400, api.CodeBadRequest, "not a turn-aware model"},
		{"eot_threshold out of range", base + "&eot_threshold=0.3", 400, api.CodeBadRequest, "eot_threshold 0.3 is out of range"},
		{"eot_threshold not a number", base + "&eot_threshold=high", 400, api.CodeInvalidQueryParameter, ""},
		{"eager above eot", base + "&eot_threshold=0.6&eager_eot_threshold=0.8", 400, api.CodeBadRequest, ""},
		{"eot_timeout_ms out of range", base + "&eot_timeout_ms=100", 400, api.CodeBadRequest, ""},
		{"keyterm", base + "&keyterm=Earshot", 400, api.CodeBadRequest, "The local engine does not offer keyterm on /v2/listen yet."},
		{"raw opus", "model=flux-general-en&encoding=opus&sample_rate=48000", 400, api.CodeBadRequest, "encoding=opus"},
		{"raw without sample_rate", "model=flux-general-en&encoding=linear16", 400, api.CodeBadRequest, "sample_rate is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, a := dialTurns(t, ctx, shared, tc.query)
			if c != nil {
				t.Fatalf("%s: the handshake succeeded", tc.query)
			}
			if tc.code != "" {
				a.wantError(t, tc.status, tc.code, "")
			} else if a.status != tc.status {
				t.Errorf("status %d, want %d; body %s", a.status, tc.status, a.body)
			}
			if b := a.legacy(t); !strings.Contains(b.ErrMsg, tc.msg) {
				t.Errorf("err_msg %q, want it to contain %q", b.ErrMsg, tc.msg)
			}
		})
	}
	// Credentials are checked as everywhere.
	q, _ := url.ParseQuery(base)
	_, _, err := websocket.Dial(ctx, "ws://"+shared.URL.Host+api.PathListenV2+"?"+q.Encode(), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Token wrong"}}})
	if err == nil {
		t.Error("a wrong key opened a stream")
	}
}

// The api client's turn stream works against the engine, and the model
// list names the real engine behind flux-general-en.
func TestTurnsClientAndModel(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, time.Minute)
	c := newClient(t, shared)
	s, err := c.Turns(ctx, api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16", SampleRate: 16000, EOTThreshold: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pcm := pcmBytes(append(clipSamples(t, "0880"), silence(t, 24000)...))
	for off := 0; off < len(pcm); off += 3200 {
		if err := s.Send(ctx, pcm[off:min(off+3200, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseStream(ctx); err != nil {
		t.Fatal(err)
	}
	var msgs []api.TurnMessage
	for {
		m, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 || msgs[0].(*api.Connected).RequestID != s.RequestID() || len(turnInfos(msgs, api.EventEndOfTurn)) != 1 {
		t.Errorf("messages %v, want Connected with the request id, then one turn", turnTypes(msgs))
	}

	a := do(t, shared, http.MethodGet, api.PathModels+"/"+api.ModelFluxGeneralEN, tokenAuth(shared), nil, nil)
	var m api.STTModel
	if err := json.Unmarshal(a.body, &m); err != nil || a.status != http.StatusOK {
		t.Fatalf("GET the model: %d %s", a.status, a.body)
	}
	if m.Name != api.ModelFluxGeneralEN || m.UUID != turnModelUUID || m.Batch || !m.Streaming || !strings.Contains(m.Engine, "pocketsphinx") || !strings.Contains(m.Engine, "turn detector") {
		t.Errorf("model record %+v", m)
	}
	list, err := c.Models(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.STT, func(m api.STTModel) bool { return m.Name == api.ModelFluxGeneralEN }) ||
		slices.ContainsFunc(list.STT, func(m api.STTModel) bool { return m.Name == api.ModelFluxGeneralMulti }) {
		t.Errorf("model list %+v: want flux-general-en and not flux-general-multi", list.STT)
	}
}

// FuzzTurnControl feeds arbitrary text messages to a session's parser and
// controller: it must never panic, and every message gets at most one
// answer of the kinds the interface defines.
func FuzzTurnControl(f *testing.F) {
	for _, s := range []string{
		`{"type":"Configure","thresholds":{"eot_threshold":"0.8","eot_timeout_ms":"3000"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":0.8,"eager_eot_threshold":0.5}}`,
		`{"type":"Configure","thresholds":{"eot_timeout_ms":"1e9"}}`,
		`{"type":"Configure","thresholds":{"eot_threshold":"NaN"}}`,
		`{"type":"Configure","keyterms":["a"],"language_hints":["en"]}`,
		`{"type":"Configure","thresholds":null}`,
		`{"type":"ForceEndTurn"}`,
		`{"type":"CloseStream"}`,
		`{"type":"KeepAlive"}`,
		`{"type":"Nope"}`,
		`{"type":null}`,
		`[]`, `null`, `"x"`, ``, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		det, err := turn.New(turn.DefaultSettings())
		if err != nil {
			t.Fatal(err)
		}
		ad, err := audio.NewSpeechDecoder(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: 16000, Channels: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer ad.Close()
		dec, release, err := shared.Engine.asr.decoder(context.Background(), streamingPostSpeechFrames)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		stream, err := dec.NewStream(sphinx.StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		s := &turnSession{socket: &socket{e: shared.Engine, out: make(chan outFrame, 16)}, turnFeed: turnFeed{det: det, stream: stream}, audio: ad,
			opts: api.TurnOptions{Model: api.ModelFluxGeneralEN, Encoding: "linear16", SampleRate: 16000}}
		_, _, done := s.control(t.Context(), []byte(msg))
		close(s.out)
		var answers []string
		for f := range s.out {
			m, err := api.DecodeTurnMessage(f.data)
			if err != nil {
				t.Fatalf("the engine sent %s: %v", f.data, err)
			}
			answers = append(answers, m.MessageType())
		}
		if len(answers) > 1 {
			t.Fatalf("%q: answers %v", msg, answers)
		}
		if done && len(answers) != 0 {
			t.Fatalf("%q ended the stream with %v", msg, answers)
		}
		if err := s.det.Settings().Validate(); err != nil {
			t.Fatalf("%q left invalid settings: %v", msg, err)
		}
	})
}

// BenchmarkTurnEndLatency measures the end-of-turn latency the issue
// asks about: each LibriVox clip is streamed at real-time pace in frames
// of 20 ms, followed by the recording's silence, with eot_threshold 0.7;
// the latency is the time from sending the audio of the end of the turn's
// last word to the arrival of EndOfTurn. It reports the median and the
// worst over the clips (one iteration streams all five, about 35 s).
func BenchmarkTurnEndLatency(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var lat []float64
	for b.Loop() {
		for _, id := range clipIDs {
			lat = append(lat, turnEndLatency(b, ctx, id).Seconds()*1000)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "ms-median-eot")
	b.ReportMetric(lat[len(lat)-1], "ms-max-eot")
	b.ReportMetric(0, "ns/op")
}

// turnEndLatency streams one clip at real time and returns the
// end-of-turn latency.
func turnEndLatency(b *testing.B, ctx context.Context, id string) time.Duration {
	tc := openTurns(b, ctx, shared, "model=flux-general-en&encoding=linear16&sample_rate=16000&eot_threshold=0.7")
	const frame = 320 // 20 ms
	pcm := append(append(silence(b, 8000), clipSamples(b, id)...), silence(b, 3*16000)...)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var sent []time.Time // when each frame was sent
	for off := 0; off < len(pcm); off += frame {
		if err := tc.conn.Write(ctx, websocket.MessageBinary, pcmBytes(pcm[off:min(off+frame, len(pcm))])); err != nil {
			b.Fatal(err)
		}
		sent = append(sent, time.Now())
		select {
		case <-tick.C:
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		}
		for len(tc.msgs) > 0 {
			m, at := <-tc.msgs, <-tc.times
			<-tc.raw
			if ti, ok := m.(*api.TurnInfo); ok && ti.Event == api.EventEndOfTurn {
				if ti.Trigger != api.TriggerModel || len(ti.Words) == 0 {
					b.Fatalf("clip %s: %+v", id, ti)
				}
				// The frame holding the end of the last word.
				i := min(int(ti.Words[len(ti.Words)-1].End*16000)/frame, len(sent)-1)
				d := at.Sub(sent[i])
				b.Logf("clip %s: last word ends at %.2f s, EndOfTurn at %.2f s of audio, %v later", id, ti.Words[len(ti.Words)-1].End, ti.AudioWindowEnd, d.Round(time.Millisecond))
				return d
			}
		}
	}
	b.Fatalf("clip %s: no EndOfTurn", id)
	return 0
}
