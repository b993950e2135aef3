package sessions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/store"
)

// Features are the analyses asked of a document or a transcript.
type Features struct {
	Summary, Sentiment, Topics, Intents bool
}

// AllFeatures asks for every analysis.
func AllFeatures() Features {
	return Features{Summary: true, Sentiment: true, Topics: true, Intents: true}
}

// Any reports whether any analysis is asked for.
func (f Features) Any() bool { return f.Summary || f.Sentiment || f.Topics || f.Intents }

// Names lists the analyses asked for, as the service's parameters name
// them, for history and for people.
func (f Features) Names() []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Summary, "summarize"}, {f.Sentiment, "sentiment"}, {f.Topics, "topics"}, {f.Intents, "intents"}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

// AnalyzeFeatures are the Analyze tab's feature toggles saved in s.
func AnalyzeFeatures(s store.Settings) Features {
	return Features{Summary: s.AnalyzeSummary, Sentiment: s.AnalyzeSentiment, Topics: s.AnalyzeTopics, Intents: s.AnalyzeIntents}
}

// SetAnalyzeFeatures stores f as the Analyze tab's toggles in s.
func SetAnalyzeFeatures(s *store.Settings, f Features) {
	s.AnalyzeSummary, s.AnalyzeSentiment, s.AnalyzeTopics, s.AnalyzeIntents = f.Summary, f.Sentiment, f.Topics, f.Intents
}

// FileFeatures are the audio intelligence the settings ask of file
// transcriptions.
func FileFeatures(s store.Settings) Features {
	return Features{Summary: s.FileSummary, Sentiment: s.FileSentiment, Topics: s.FileTopics, Intents: s.FileIntents}
}

// ReadOptionsFor are the /v1/read options for f in language (English
// when ""). Summaries are asked as v2, the current version.
func ReadOptionsFor(language string, f Features) api.ReadOptions {
	if strings.TrimSpace(language) == "" {
		language = "en"
	}
	o := api.ReadOptions{Language: language, Sentiment: f.Sentiment, Topics: f.Topics, Intents: f.Intents}
	if f.Summary {
		o.Summarize = "v2"
	}
	return o
}

// checkReadOptions checks o as the service would before anything is
// sent, in words a person can act on.
func checkReadOptions(o api.ReadOptions, f Features) error {
	if !f.Any() {
		return ErrNoFeatures
	}
	err := o.CheckRequest()
	var oe *api.OptionError
	if errors.As(err, &oe) && oe.Param == "language" {
		return fmt.Errorf("%w, and the language in Settings is %q: %w", ErrEnglishOnly, o.Language, err)
	}
	return err
}
