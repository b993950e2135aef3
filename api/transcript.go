package api

// Word is one recognised word, as it appears in batch responses, streaming
// Results and utterances. Optional fields are pointers or omitempty so that
// a word encodes exactly as the service sends it.
type Word struct {
	Word       string  `json:"word"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
	// PunctuatedWord is present with punctuate or smart_format.
	PunctuatedWord string `json:"punctuated_word,omitempty"`
	// Speaker and SpeakerConfidence are present with diarization.
	Speaker           *int     `json:"speaker,omitempty"`
	SpeakerConfidence *float64 `json:"speaker_confidence,omitempty"`
	Language          string   `json:"language,omitempty"`
	Sentiment         string   `json:"sentiment,omitempty"`
	SentimentScore    *float64 `json:"sentiment_score,omitempty"`
}

// Text returns the punctuated form of the word when present, else the bare word.
func (w Word) Text() string {
	if w.PunctuatedWord != "" {
		return w.PunctuatedWord
	}
	return w.Word
}

// Sentence is one sentence of a paragraph.
type Sentence struct {
	Text  string  `json:"text"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Paragraph groups sentences; Speaker is set with diarization.
type Paragraph struct {
	Sentences []Sentence `json:"sentences"`
	Speaker   *int       `json:"speaker,omitempty"`
	NumWords  int        `json:"num_words"`
	Start     float64    `json:"start"`
	End       float64    `json:"end"`
}

// Paragraphs is the paragraphs block of an alternative. Its Transcript
// starts each paragraph with a newline, as the service does.
type Paragraphs struct {
	Transcript string      `json:"transcript"`
	Paragraphs []Paragraph `json:"paragraphs"`
}

// Entity is one detected entity. StartWord and EndWord index the words of
// the alternative it belongs to.
type Entity struct {
	Label      string  `json:"label"`
	Value      string  `json:"value"`
	RawValue   string  `json:"raw_value,omitempty"`
	Confidence float64 `json:"confidence"`
	StartWord  int     `json:"start_word"`
	EndWord    int     `json:"end_word"`
}

// Alternative is one transcript hypothesis of a channel.
type Alternative struct {
	Transcript string      `json:"transcript"`
	Confidence float64     `json:"confidence"`
	Words      []Word      `json:"words"`
	Paragraphs *Paragraphs `json:"paragraphs,omitempty"`
	Entities   []Entity    `json:"entities,omitzero"`
	Summaries  []Summary   `json:"summaries,omitempty"`
	Languages  []string    `json:"languages,omitempty"`
}

// Summary is a legacy (summarize=v1) per-alternative summary.
type Summary struct {
	Summary   string `json:"summary"`
	StartWord int    `json:"start_word"`
	EndWord   int    `json:"end_word"`
}
