package sessions

import (
	"strings"
	"testing"

	"github.com/earshot-app/earshot/api"
)

func TestWordIndexSpan(t *testing.T) {
	const text = "  Hi. Thank you\tfor calling,\n\nplease hold. "
	x := IndexWords(text)
	if got, want := x.Len(), len(strings.Fields(text)); got != want {
		t.Fatalf("Len() = %d, want %d", got, want)
	}
	tests := []struct {
		name       string
		start, end int
		want       string
		ok         bool
	}{
		{"one word", 0, 0, "Hi.", true},
		{"across a tab", 1, 3, "Thank you\tfor", true},
		{"across a blank line", 4, 5, "calling,\n\nplease", true},
		{"last word", 6, 6, "hold.", true},
		{"end beyond the text is clamped", 5, 99, "please hold.", true},
		{"negative start is clamped", -3, 1, "Hi. Thank", true},
		{"start beyond the text", 7, 9, "", false},
		{"reversed", 3, 2, "", false},
		{"both negative", -5, -1, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, ok := x.Span(tt.start, tt.end)
			if ok != tt.ok {
				t.Fatalf("Span(%d, %d) ok = %v, want %v", tt.start, tt.end, ok, tt.ok)
			}
			if ok && text[sp.Start:sp.End] != tt.want {
				t.Errorf("Span(%d, %d) = %q, want %q", tt.start, tt.end, text[sp.Start:sp.End], tt.want)
			}
			if got := x.Passage(text, tt.start, tt.end, "fallback"); ok && got != tt.want || !ok && got != "fallback" {
				t.Errorf("Passage(%d, %d) = %q", tt.start, tt.end, got)
			}
		})
	}
	if _, ok := IndexWords(" \n\t").Span(0, 0); ok {
		t.Error("a blank text has a word")
	}
}

func TestTimeRange(t *testing.T) {
	words := []api.Word{{Start: 1, End: 1.5}, {Start: 1.6, End: 2}, {Start: 12, End: 12.4}}
	tests := []struct {
		name         string
		start, end   int
		wantS, wantE float64
		ok           bool
	}{
		{"all", 0, 2, 1, 12.4, true},
		{"clamped", 1, 40, 1.6, 12.4, true},
		{"out of range", 3, 4, 0, 0, false},
		{"reversed", 2, 1, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e, ok := TimeRange(words, tt.start, tt.end)
			if ok != tt.ok || s != tt.wantS || e != tt.wantE {
				t.Errorf("TimeRange(%d, %d) = %v, %v, %v; want %v, %v, %v", tt.start, tt.end, s, e, ok, tt.wantS, tt.wantE, tt.ok)
			}
		})
	}
}

// FuzzWordSpan feeds the mapping hostile texts and indexes, as a service
// might send: it must never panic, and a span it returns must hold
// exactly the words it names.
func FuzzWordSpan(f *testing.F) {
	f.Add("Hi. Thank you for calling.", 0, 2)
	f.Add("", 0, 0)
	f.Add("one", -1, 5)
	f.Add("a\u00a0b\u2003c \xff\xfe d", 1, 3)
	f.Add("  lead and trail  ", 2, 1)
	f.Fuzz(func(t *testing.T, text string, start, end int) {
		x := IndexWords(text)
		fields := strings.Fields(text)
		if x.Len() != len(fields) {
			t.Fatalf("%d words, strings.Fields finds %d", x.Len(), len(fields))
		}
		sp, ok := x.Span(start, end)
		_ = x.Passage(text, start, end, "")
		if !ok {
			return
		}
		if sp.Start < 0 || sp.End > len(text) || sp.Start > sp.End {
			t.Fatalf("span %v outside a %d-byte text", sp, len(text))
		}
		s, e := max(start, 0), min(end, len(fields)-1)
		if got, want := strings.Fields(text[sp.Start:sp.End]), fields[s:e+1]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("span %v holds %q, want words %d-%d %q", sp, got, s, e, want)
		}
	})
}
