package count

import "testing"

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "reply", "1 reply"},
		{7, "reply", "7 replies"},
		{0, "caption", "0 captions"},
		{2, "day", "2 days"},
		{2, "key", "2 keys"},
		{3, "match", "3 matches"},
		{2, "box", "2 boxes"},
		{2, "analysis", "2 analyses"},
		{2, "synthesis", "2 syntheses"},
		{2, "entity", "2 entities"},
		{2, "action item", "2 action items"},
		{2, "older session", "2 older sessions"},
		{12345, "word", "12,345 words"},
		{1000000, "word", "1,000,000 words"},
		{-1500, "second", "-1,500 seconds"},
	} {
		if got := Of(tt.n, tt.noun); got != tt.want {
			t.Errorf("Of(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

func TestNoun(t *testing.T) {
	if got := Noun(1, "reply"); got != "reply" {
		t.Errorf("Noun(1, reply) = %q", got)
	}
	if got := Noun(7, "reply"); got != "replies" {
		t.Errorf("Noun(7, reply) = %q", got)
	}
}
