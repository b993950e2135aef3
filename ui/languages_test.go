package ui

import "testing"

func TestLanguageLabel(t *testing.T) {
	for tag, want := range map[string]string{
		"de": "German (de)", "en-GB": "English (en-GB)", "pt_BR": "Portuguese (pt_BR)",
		"ES": "Spanish (ES)", "multi": "Several languages (multi)", "xx": "xx", "": "",
	} {
		if got := languageLabel(tag); got != want {
			t.Errorf("languageLabel(%q) = %q, want %q", tag, got, want)
		}
	}
}
