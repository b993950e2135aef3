package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// FeatureInfo describes the model behind an intelligence feature.
type FeatureInfo struct {
	ModelUUID    string `json:"model_uuid"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
}

// DiarizeInfo names the diarization model that ran. Arch is the only way
// to tell which version "latest" resolved to.
type DiarizeInfo struct {
	ModelUUID string `json:"model_uuid"`
	Arch      string `json:"arch"`
}

// ResponseWarning is a warning in a response's metadata, for example a
// feature that does not support the audio's language.
type ResponseWarning struct {
	Parameter string `json:"parameter"`
	Type      string `json:"type"`
	Message   string `json:"message"`
}

// ListenMetadata is the metadata of a batch transcription.
type ListenMetadata struct {
	TransactionKey string               `json:"transaction_key"`
	RequestID      string               `json:"request_id"`
	SHA256         string               `json:"sha256"`
	Created        string               `json:"created"`
	Duration       float64              `json:"duration"`
	Channels       int                  `json:"channels"`
	Models         []string             `json:"models"`
	ModelInfo      map[string]ModelInfo `json:"model_info"`
	DiarizeInfo    *DiarizeInfo         `json:"diarize_info,omitempty"`
	SummaryInfo    *FeatureInfo         `json:"summary_info,omitempty"`
	SentimentInfo  *FeatureInfo         `json:"sentiment_info,omitempty"`
	TopicsInfo     *FeatureInfo         `json:"topics_info,omitempty"`
	IntentsInfo    *FeatureInfo         `json:"intents_info,omitempty"`
	Warnings       []ResponseWarning    `json:"warnings,omitempty"`
	Tags           []string             `json:"tags,omitempty"`
	Extra          map[string]string    `json:"extra,omitempty"`
}

// SearchHit is one match of a search term.
type SearchHit struct {
	Confidence float64 `json:"confidence"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Snippet    string  `json:"snippet"`
}

// SearchResult gathers the hits of one search term.
type SearchResult struct {
	Query string      `json:"query"`
	Hits  []SearchHit `json:"hits"`
}

// ResultChannel is one audio channel of a batch transcription.
type ResultChannel struct {
	Alternatives       []Alternative  `json:"alternatives"`
	Search             []SearchResult `json:"search,omitempty"`
	DetectedLanguage   string         `json:"detected_language,omitempty"`
	LanguageConfidence float64        `json:"language_confidence,omitempty"`
}

// Utterance is a stretch of speech between pauses (utterances=true).
type Utterance struct {
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Confidence float64 `json:"confidence"`
	Channel    int     `json:"channel"`
	Transcript string  `json:"transcript"`
	Words      []Word  `json:"words"`
	Speaker    *int    `json:"speaker,omitempty"`
	ID         string  `json:"id"`
}

// SummaryResult is the summary of a batch transcription (summarize=v2).
type SummaryResult struct {
	Result string `json:"result"`
	Short  string `json:"short"`
}

// SentimentSegment is the sentiment of a stretch of text.
type SentimentSegment struct {
	Text           string  `json:"text"`
	StartWord      int     `json:"start_word"`
	EndWord        int     `json:"end_word"`
	Sentiment      string  `json:"sentiment"`
	SentimentScore float64 `json:"sentiment_score"`
}

// SentimentAverage is the sentiment of the whole input.
type SentimentAverage struct {
	Sentiment      string  `json:"sentiment"`
	SentimentScore float64 `json:"sentiment_score"`
}

// Sentiments is the sentiment result, the same on /v1/listen and /v1/read.
type Sentiments struct {
	Segments []SentimentSegment `json:"segments"`
	Average  SentimentAverage   `json:"average"`
}

// Topic is a detected topic with its confidence.
type Topic struct {
	Topic           string  `json:"topic"`
	ConfidenceScore float64 `json:"confidence_score"`
}

// TopicSegment links topics to the text they were found in.
type TopicSegment struct {
	Text      string  `json:"text"`
	StartWord int     `json:"start_word"`
	EndWord   int     `json:"end_word"`
	Topics    []Topic `json:"topics"`
}

// Topics is the topics result.
type Topics struct {
	Segments []TopicSegment `json:"segments"`
}

// Intent is a detected intent with its confidence.
type Intent struct {
	Intent          string  `json:"intent"`
	ConfidenceScore float64 `json:"confidence_score"`
}

// IntentSegment links intents to the text they were found in.
type IntentSegment struct {
	Text      string   `json:"text"`
	StartWord int      `json:"start_word"`
	EndWord   int      `json:"end_word"`
	Intents   []Intent `json:"intents"`
}

// Intents is the intents result.
type Intents struct {
	Segments []IntentSegment `json:"segments"`
}

// ListenResults is the results block of a batch transcription.
type ListenResults struct {
	Channels   []ResultChannel `json:"channels"`
	Utterances []Utterance     `json:"utterances,omitzero"`
	Summary    *SummaryResult  `json:"summary,omitempty"`
	Sentiments *Sentiments     `json:"sentiments,omitempty"`
	Topics     *Topics         `json:"topics,omitempty"`
	Intents    *Intents        `json:"intents,omitempty"`
}

// ListenResponse is the answer of POST /v1/listen. With a callback the
// service answers only a request id, found in Metadata.RequestID, and the
// results arrive at the callback.
type ListenResponse struct {
	Metadata ListenMetadata `json:"metadata"`
	Results  ListenResults  `json:"results"`
}

// Transcript returns the transcript of the first alternative of the
// first channel.
func (r *ListenResponse) Transcript() string {
	if len(r.Results.Channels) == 0 || len(r.Results.Channels[0].Alternatives) == 0 {
		return ""
	}
	return r.Results.Channels[0].Alternatives[0].Transcript
}

// acceptedResponse is the answer to a request with a callback.
type acceptedResponse struct {
	RequestID string `json:"request_id"`
}

// ContainerKind names the container a file's first bytes announce, or ""
// for headerless (raw) audio. It needs at most the first 12 bytes.
func ContainerKind(head []byte) string {
	switch {
	case len(head) >= 12 && string(head[0:4]) == "RIFF" && string(head[8:12]) == "WAVE":
		return "wav"
	case len(head) >= 4 && string(head[0:4]) == "OggS":
		return "ogg"
	case len(head) >= 4 && string(head[0:4]) == "fLaC":
		return "flac"
	case len(head) >= 3 && string(head[0:3]) == "ID3":
		return "mp3"
	case len(head) >= 2 && head[0] == 0xFF && head[1]&0xE0 == 0xE0 && head[1]&0x06 != 0:
		return "mp3"
	case len(head) >= 4 && bytes.Equal(head[0:4], []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "webm"
	case len(head) >= 8 && string(head[4:8]) == "ftyp":
		return "mp4"
	}
	return ""
}

// CheckEncodingFor applies the rule "for containerized audio omit
// encoding": head is the start of the audio about to be sent.
func CheckEncodingFor(head []byte, encoding string) error {
	if encoding == "" {
		return nil
	}
	if kind := ContainerKind(head); kind != "" {
		return badParam(qEncoding, fmt.Sprintf("this is %s audio, which carries its own format: omit encoding (it was %s) and sample_rate", kind, encoding))
	}
	return nil
}

// Transcribe sends audio to POST /v1/listen and returns the transcription.
// Options are checked before anything is sent; the first bytes of audio
// are checked against the encoding rule. contentType may be empty.
func (c *Client) Transcribe(ctx context.Context, audio io.Reader, contentType string, opts ListenOptions) (*ListenResponse, error) {
	if audio == nil {
		return nil, &OptionError{Param: "audio", Reason: "no audio to transcribe"}
	}
	if err := opts.CheckRequest(Batch); err != nil {
		return nil, err
	}
	if err := c.endpoint.CheckModel(opts.Model); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(audio, 4096)
	head, err := br.Peek(12)
	if err != nil && len(head) == 0 {
		if err == io.EOF {
			return nil, &OptionError{Param: "audio", Reason: "the audio is empty"}
		}
		return nil, fmt.Errorf("read audio: %w", err)
	}
	if err := CheckEncodingFor(head, opts.Encoding); err != nil {
		return nil, err
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	req, err := c.newRequest(ctx, http.MethodPost, PathListen, opts.Query(), br, contentType, authDefault)
	if err != nil {
		return nil, err
	}
	return c.sendListen(req, opts)
}

// TranscribeURL asks the service to fetch audio from a URL and transcribe it.
func (c *Client) TranscribeURL(ctx context.Context, audioURL string, opts ListenOptions) (*ListenResponse, error) {
	if err := opts.CheckRequest(Batch); err != nil {
		return nil, err
	}
	if err := c.endpoint.CheckModel(opts.Model); err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]string{"url": audioURL})
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, http.MethodPost, PathListen, opts.Query(), bytes.NewReader(body), "application/json", authDefault)
	if err != nil {
		return nil, err
	}
	return c.sendListen(req, opts)
}

func (c *Client) sendListen(req *http.Request, opts ListenOptions) (*ListenResponse, error) {
	resp, err := c.send(req)
	if err != nil {
		return nil, fmt.Errorf("transcribe: %w", err)
	}
	defer resp.Body.Close()
	if opts.Callback != "" {
		var acc acceptedResponse
		if err := decodeJSONBody(resp, &acc); err != nil {
			return nil, fmt.Errorf("transcribe: %w", err)
		}
		return &ListenResponse{Metadata: ListenMetadata{RequestID: acc.RequestID}}, nil
	}
	var out ListenResponse
	if err := decodeJSONBody(resp, &out); err != nil {
		return nil, fmt.Errorf("transcribe: %w", err)
	}
	return &out, nil
}
