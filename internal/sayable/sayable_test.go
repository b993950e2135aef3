package sayable

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		lang, text string
		nothing    bool
		said       int
		skipped    string
	}{
		{"en", "Hello, world!", false, 10, ""},
		{"en", "😀🎉👍", true, 0, "3 emoji and symbols (😀 🎉 👍)"},
		{"en", "你好世界。今天天气很好。", true, 0, "10 Chinese characters (你 好 世 界 今 天 气 很 …)"},
		{"en", "Hello 😀 world.", false, 10, "1 emoji and symbols (😀)"},
		{"en", "Привет мир", true, 0, "9 Cyrillic letters (П р и в е т м …)"},
		{"en", "مرحبا 42", false, 2, "5 Arabic letters (م ر ح ب ا)"},
		{"fr", "Ça coûte 5 €, déjà.", false, 12, ""},
		{"ja", "こんにちは、世界。Tokyo", false, 12, ""},
		{"ja", "😀", true, 0, "1 emoji and symbols (😀)"},
		{"en", "👍🏽 ok", false, 2, "2 emoji and symbols (👍 🏽)"},
		{"xx", "你好", false, 2, ""},
		{"en", "  ... !", false, 0, ""},
	}
	for _, tt := range tests {
		r := Check(tt.lang, tt.text)
		if r.Nothing() != tt.nothing || r.Said != tt.said || r.String() != tt.skipped {
			t.Errorf("Check(%s, %q) = nothing %v, said %d, skipped %q; want %v, %d, %q", tt.lang, tt.text, r.Nothing(), r.Said, r.String(), tt.nothing, tt.said, tt.skipped)
		}
	}
	if got := Check("en", "a 😀 b 你 c").String(); got != "1 emoji and symbols (😀) and 1 Chinese characters (你)" {
		t.Errorf("two kinds: %q", got)
	}
}

func TestStrip(t *testing.T) {
	tests := []struct{ lang, text, want string }{
		{"en", "Hello 😀 world.", "Hello      world."},
		{"en", "no change", "no change"},
		{"en", "a👩‍💻b", "a" + strings.Repeat(" ", len("👩‍💻")) + "b"},
		{"ja", "世界😀", "世界    "},
		{"en", "bad \xff byte 你", "bad   byte    "},
	}
	for _, tt := range tests {
		if got := Strip(tt.lang, tt.text); got != tt.want || len(got) != len(tt.text) {
			t.Errorf("Strip(%s, %q) = %q, want %q", tt.lang, tt.text, got, tt.want)
		}
	}
}

// FuzzStrip: stripping never panics, keeps the length in bytes, and
// leaves nothing a second pass would strip.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{"Hello 😀 world.", "你好", "\xff\xfe", "👩‍💻", "١٢٣"} {
		f.Add("en", s)
		f.Add("ja", s)
	}
	f.Fuzz(func(t *testing.T, lang, text string) {
		got := Strip(lang, text)
		if len(got) != len(text) {
			t.Fatalf("Strip(%q) is %d bytes, not %d", text, len(got), len(text))
		}
		if len(Check(lang, got).Skipped) != 0 {
			t.Fatalf("Strip(%q) = %q still holds what is not said", text, got)
		}
	})
}
