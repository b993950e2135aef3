package ui

import (
	"testing"

	"github.com/earshot-app/earshot/sessions"
)

// TestWhoSaid: a meeting heard both ways names its sides, and the
// speakers among the others when they are told apart.
func TestWhoSaid(t *testing.T) {
	two := 1
	for _, tt := range []struct {
		side    string
		speaker *int
		want    string
		ok      bool
	}{
		{"", nil, "", false},
		{"", &two, "Speaker 2", true},
		{sessions.SideYou, nil, "You", true},
		{sessions.SideYou, &two, "You", true},
		{sessions.SideOthers, nil, "Others", true},
		{sessions.SideOthers, &two, "Others (speaker 2)", true},
	} {
		if got, _, ok := whoSaid(tt.side, tt.speaker); got != tt.want || ok != tt.ok {
			t.Errorf("whoSaid(%q, %v) = %q, %v; want %q, %v", tt.side, tt.speaker, got, ok, tt.want, tt.ok)
		}
	}
}
