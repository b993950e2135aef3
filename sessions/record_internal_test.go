package sessions

import "testing"

// TestCounted: what a session lost is named as a person would count it.
func TestCounted(t *testing.T) {
	for _, tc := range []struct {
		whats  []string
		want   string
		plural bool
	}{
		{[]string{"the audio"}, "the audio", false},
		{[]string{"a caption"}, "a caption", false},
		{[]string{"a caption", "a caption", "a caption"}, "3 captions", true},
		{[]string{"a caption", "a caption", "the audio"}, "2 captions and the audio", true},
		{[]string{"a line of the conversation", "a line of the conversation", "the end of the session"}, "2 lines of the conversation and the end of the session", true},
		{[]string{"a turn", "the audio", "a turn", "the end of the session"}, "2 turns, the audio and the end of the session", true},
	} {
		got, plural := counted(tc.whats)
		if got != tc.want || plural != tc.plural {
			t.Errorf("counted(%q) = %q, %v; want %q, %v", tc.whats, got, plural, tc.want, tc.plural)
		}
	}
}
