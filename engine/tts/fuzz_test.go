package tts

import (
	"context"
	"testing"
)

// FuzzSynthesize feeds arbitrary text to both libraries: synthesis must
// not crash, TextEnd must stay within the text and never go back, and a
// completed text ends at its length.
func FuzzSynthesize(f *testing.F) {
	for _, s := range []string{
		"Hello, world.",
		"1234567890 $3.50 12:30pm 1/2 3rd #hashtag @user http://example.com/a?b=c",
		"ÀÉÎÕÜ ß ŒÆ ¿¡ “quotes” — dashes … ellipsis",
		"<speak>not stripped</speak> &amp;",
		"\x00\xff\xfe broken \xc3",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"... ??? !!! ,,, ;;;",
		"日本語のテキスト。",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	voices := []string{DefaultVoice, "aura-2-arcas-en", "aura-2-diana-es"}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		if len(text) > 400 {
			text = text[:400]
		}
		v := mustVoice(t, voices[int(which)%len(voices)])
		last := 0
		err := synth(t).Synthesize(context.Background(), v, text, Params{}, func(c Chunk) error {
			if c.TextEnd < last || c.TextEnd > len(text) {
				t.Fatalf("TextEnd %d after %d, text length %d", c.TextEnd, last, len(text))
			}
			last = c.TextEnd
			return nil
		})
		if err != nil {
			t.Fatalf("Synthesize(%q): %v", text, err)
		}
		if len(Split(text)) > 0 && last != len(text) {
			t.Fatalf("last TextEnd %d, want %d", last, len(text))
		}
	})
}
