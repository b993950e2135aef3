package sessions_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// TestCaptionsTwoChannels (must show): the microphone's channel and the
// computer's carry different recordings at once; each caption is
// labelled with its side, You or Others, and at least 95% of the words
// are on the side that said them. History keeps the sides.
func TestCaptionsTwoChannels(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 3*time.Minute)
	you, others := loadPCM(t, librivoxPath("0870")), loadPCM(t, librivoxPath("0920"))
	// Others begin a second after you, and speak over you.
	others = append(make([]int16, audio.SpeechRate), others...)
	n := max(len(you), len(others)) + audio.SpeechRate
	stereo := make([]int16, 2*n)
	for i := range n {
		if i < len(you) {
			stereo[2*i] = you[i]
		}
		if i < len(others) {
			stereo[2*i+1] = others[i]
		}
	}
	src, err := audio.NewReplay(audio.Format{Encoding: audio.EncodingLinear16, SampleRate: audio.SpeechRate, Channels: 2}, stereo, audio.ReplayConfig{})
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	ws := agentWorkspace(t, db)
	s := store.DefaultSettings()
	s.Backend = store.BackendLocal
	if err := ws.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	c, err := ws.StartCaptions(ctx, sessions.CaptionsRequest{Source: src, SourceName: "a meeting", Sides: []string{sessions.SideYou, sessions.SideOthers}})
	if err != nil {
		t.Fatal(err)
	}
	var finals []sessions.Caption
	for ev := range c.Events() {
		if f, ok := ev.(*sessions.FinalEvent); ok {
			finals = append(finals, f.Caption)
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	}
	ref := map[string][]string{sessions.SideYou: words(truth(t)["0870"]), sessions.SideOthers: words(truth(t)["0920"])}
	right, wrong := 0, 0
	heard := map[string][]string{}
	for _, f := range finals {
		if f.Side != sessions.SideYou && f.Side != sessions.SideOthers {
			t.Fatalf("caption %q has no side (%q, channel %d)", f.Text, f.Side, f.Channel)
		}
		if (f.Side == sessions.SideYou) != (f.Channel == 0) {
			t.Errorf("caption %q is on channel %d and side %s", f.Text, f.Channel, f.Side)
		}
		other := sessions.SideYou
		if f.Side == sessions.SideYou {
			other = sessions.SideOthers
		}
		for _, w := range words(f.Text) {
			heard[f.Side] = append(heard[f.Side], w)
			mine, theirs := slices.Contains(ref[f.Side], w), slices.Contains(ref[other], w)
			switch {
			case mine && !theirs:
				right++
			case theirs && !mine:
				wrong++
			}
		}
	}
	t.Logf("You: %s\nOthers: %s", strings.Join(heard[sessions.SideYou], " "), strings.Join(heard[sessions.SideOthers], " "))
	if right+wrong < 15 {
		t.Fatalf("only %d words could be told apart", right+wrong)
	}
	if share := float64(right) / float64(right+wrong); share < 0.95 {
		t.Errorf("%.0f%% of the words are on the right side (%d of %d), want 95%%", 100*share, right, right+wrong)
	}
	tr, err := ws.Transcript(ctx, c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Captions) != len(finals) {
		t.Fatalf("history has %d captions, %d were delivered", len(tr.Captions), len(finals))
	}
	bySeq := map[int]sessions.Caption{}
	for _, f := range finals {
		bySeq[f.Seq] = f
	}
	for _, cap := range tr.Captions {
		if f := bySeq[cap.Seq]; cap.Side != f.Side || cap.Channel != f.Channel {
			t.Errorf("history has caption %d on %s (channel %d), it was on %s", cap.Seq, cap.Side, cap.Channel, f.Side)
		}
	}
}
