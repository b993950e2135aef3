package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// ReadOptions are the query parameters of POST /v1/read, text
// intelligence. Language is required; at least one of the features is
// what makes a request useful, but the service does not insist on one.
// Query and ParseReadOptions convert to and from the URL form.
type ReadOptions struct {
	// Language is required. Only English is served: "en" (or a regional
	// English tag such as en-US, which the service answers as "en").
	Language string
	// Summarize is "true" or "v2" (the same feature on /v1/read).
	Summarize string
	Sentiment bool
	Topics    bool
	Intents   bool
	// CustomTopic and CustomIntent add labels of the caller's own; their
	// modes say whether they replace (strict) or extend (extended) the
	// service's own labels.
	CustomTopic      []string
	CustomTopicMode  string
	CustomIntent     []string
	CustomIntentMode string
	// Callback, when set, makes the service answer only a request id and
	// post the results to this URL.
	Callback       string
	CallbackMethod string
}

// Messages the service answers for the rules of /v1/read.
const (
	// MsgReadMissingLanguage is the service's answer to a /v1/read request
	// without language. It masks every other problem of the request.
	MsgReadMissingLanguage = "Failed to deserialize query parameters: missing field `language`"
	// MsgReadTextOrURL is the answer to a body with both or neither of
	// text and url.
	MsgReadTextOrURL = "The request body must hold exactly one of text and url."
	// ReadTokenLimit is the largest input, in tokens, the service
	// analyses in one request; more is answered TOKEN_LIMIT_EXCEEDED.
	ReadTokenLimit = 150_000
)

// CodeTokenLimitExceeded is the error code of a /v1/read input longer than
// ReadTokenLimit tokens.
const CodeTokenLimitExceeded = "TOKEN_LIMIT_EXCEEDED"

// englishTag matches English with an optional region or script subtag.
var englishTag = regexp.MustCompile(`(?i)^en([-_][A-Za-z0-9]{1,8})*$`)

// knownReadParams lists every parameter ParseReadOptions understands.
var knownReadParams = map[string]bool{
	qLanguage: true, qSummarize: true, qSentiment: true, qTopics: true, qIntents: true,
	qCustomTopic: true, qCustomTopicMode: true, qCustomIntent: true, qCustomIntentMode: true,
	qCallback: true, qCallbackMethod: true,
}

// Query returns the options as URL query parameters.
func (o *ReadOptions) Query() url.Values {
	q := url.Values{}
	if o.Language != "" {
		q.Set(qLanguage, o.Language)
	}
	if o.Summarize != "" {
		q.Set(qSummarize, o.Summarize)
	}
	for _, b := range []struct {
		k string
		v bool
	}{{qSentiment, o.Sentiment}, {qTopics, o.Topics}, {qIntents, o.Intents}} {
		if b.v {
			q.Set(b.k, "true")
		}
	}
	for _, v := range o.CustomTopic {
		q.Add(qCustomTopic, v)
	}
	if o.CustomTopicMode != "" {
		q.Set(qCustomTopicMode, o.CustomTopicMode)
	}
	for _, v := range o.CustomIntent {
		q.Add(qCustomIntent, v)
	}
	if o.CustomIntentMode != "" {
		q.Set(qCustomIntentMode, o.CustomIntentMode)
	}
	if o.Callback != "" {
		q.Set(qCallback, o.Callback)
	}
	if o.CallbackMethod != "" {
		q.Set(qCallbackMethod, o.CallbackMethod)
	}
	return q
}

// missingLanguage is the service's refusal of a request without language.
func missingLanguage() *OptionError {
	return &OptionError{Param: qLanguage, Reason: MsgReadMissingLanguage,
		Status: http.StatusBadRequest, Code: CodeInvalidQueryParameter}
}

// ParseReadOptions reads /v1/read options from a URL query, as the
// service does: a missing language is reported before anything else, and
// values must have the right type. It returns the names of parameters it
// does not know (the service ignores those).
func ParseReadOptions(q url.Values) (ReadOptions, []string, error) {
	unknown := unknownParams(q, func(k string) bool { return knownReadParams[k] })
	r := queryReader{q: q}
	var o ReadOptions
	o.Language = r.str(qLanguage)
	if o.Language == "" {
		return ReadOptions{}, unknown, missingLanguage()
	}
	o.Summarize = r.summarize(qSummarize)
	o.Sentiment = r.boolean(qSentiment)
	o.Topics = r.boolean(qTopics)
	o.Intents = r.boolean(qIntents)
	o.CustomTopic = r.list(qCustomTopic)
	o.CustomTopicMode = r.lower(qCustomTopicMode)
	o.CustomIntent = r.list(qCustomIntent)
	o.CustomIntentMode = r.lower(qCustomIntentMode)
	o.Callback = r.str(qCallback)
	o.CallbackMethod = r.upper(qCallbackMethod)
	if r.err != nil {
		return ReadOptions{}, unknown, r.err
	}
	return o, unknown, nil
}

// ReadLanguage returns the language the service reports for a /v1/read
// language tag: "en" for every English tag, and "" for a tag it refuses.
func ReadLanguage(tag string) string {
	if englishTag.MatchString(strings.TrimSpace(tag)) {
		return "en"
	}
	return ""
}

// Validate applies the rules the service enforces on /v1/read options. The
// language is checked first; its absence masks every other problem. The
// *OptionError returned carries the service's status and code.
func (o *ReadOptions) Validate() error {
	lang := strings.TrimSpace(o.Language)
	switch {
	case lang == "":
		return missingLanguage()
	case strings.EqualFold(lang, "multi"):
		return badParam(qLanguage, "language=multi is not available for text intelligence; it analyses English only (language=en)")
	case ReadLanguage(lang) == "":
		return badParam(qLanguage, fmt.Sprintf("text intelligence analyses English only (language=en), not %q", o.Language))
	}
	switch o.Summarize {
	case "", "true", "v2":
	default:
		return badParam(qSummarize, fmt.Sprintf("summarize takes true or v2, not %q", o.Summarize))
	}
	if err := checkCustom(o.CustomTopicMode, o.CustomIntentMode, len(o.CustomTopic), len(o.CustomIntent)); err != nil {
		return err
	}
	if o.CallbackMethod != "" && !slices.Contains([]string{"POST", "PUT"}, o.CallbackMethod) {
		return badParam(qCallbackMethod, fmt.Sprintf("callback_method takes POST or PUT, not %q", o.CallbackMethod))
	}
	if err := checkCallback(o.Callback); err != nil {
		return err
	}
	return nil
}

// CheckRequest applies Validate and, on top of it, the rules a careful
// client checks before a request leaves although the service would accept
// it: parameters that have no effect where they are sent.
func (o *ReadOptions) CheckRequest() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.CustomTopicMode != "" && len(o.CustomTopic) == 0 {
		return badParam(qCustomTopicMode, "custom_topic_mode needs custom_topic to apply to")
	}
	if o.CustomIntentMode != "" && len(o.CustomIntent) == 0 {
		return badParam(qCustomIntentMode, "custom_intent_mode needs custom_intent to apply to")
	}
	if o.CallbackMethod != "" && o.Callback == "" {
		return badParam(qCallbackMethod, "callback_method has no effect without callback")
	}
	if o.Summarize == "" && !o.Sentiment && !o.Topics && !o.Intents && len(o.CustomTopic) == 0 && len(o.CustomIntent) == 0 {
		return badParam("", "no feature requested: set summarize, sentiment, topics or intents")
	}
	return nil
}

// ReadRequest is the body of POST /v1/read: exactly one of Text (the
// document itself) and URL (where the service fetches a plain-text
// document).
type ReadRequest struct {
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// ErrReadBody is matched by a /v1/read body with both or neither of text
// and url: the service answers it PAYLOAD_ERROR.
var ErrReadBody = errors.New("exactly one of text and url")

// Check reports a body that holds both or neither of text and url, as a
// *OptionError that also matches ErrReadBody.
func (r ReadRequest) Check() error {
	if (r.Text == "") == (r.URL == "") {
		return &readBodyError{OptionError{Param: "body", Reason: MsgReadTextOrURL,
			Status: http.StatusBadRequest, Code: CodePayloadError}}
	}
	if r.URL != "" {
		if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &OptionError{Param: "url", Reason: fmt.Sprintf("%q is not an http or https URL", r.URL),
				Status: http.StatusBadRequest, Code: CodePayloadError}
		}
	}
	return nil
}

// readBodyError is an OptionError that also matches ErrReadBody.
type readBodyError struct{ OptionError }

// Is matches ErrReadBody and ErrInvalidOptions.
func (e *readBodyError) Is(target error) bool {
	return target == ErrReadBody || target == ErrInvalidOptions
}

// Unwrap exposes the *OptionError, so errors.As finds it.
func (e *readBodyError) Unwrap() error { return &e.OptionError }

// ReadMetadata is the metadata of a text-intelligence answer. Each
// feature's info is present only when the feature ran.
type ReadMetadata struct {
	RequestID     string            `json:"request_id"`
	Created       string            `json:"created"`
	Language      string            `json:"language"`
	SummaryInfo   *FeatureInfo      `json:"summary_info,omitempty"`
	SentimentInfo *FeatureInfo      `json:"sentiment_info,omitempty"`
	TopicsInfo    *FeatureInfo      `json:"topics_info,omitempty"`
	IntentsInfo   *FeatureInfo      `json:"intents_info,omitempty"`
	Warnings      []ResponseWarning `json:"warnings,omitempty"`
}

// ReadSummary is the summary of a document (results.summary.text). It
// differs from the /v1/listen summary, which is {result, short}.
type ReadSummary struct {
	Text string `json:"text"`
}

// ReadResults holds the result of each feature that was requested. The
// sentiment, topic and intent results share their types with /v1/listen.
type ReadResults struct {
	Summary    *ReadSummary `json:"summary,omitempty"`
	Sentiments *Sentiments  `json:"sentiments,omitempty"`
	Topics     *Topics      `json:"topics,omitempty"`
	Intents    *Intents     `json:"intents,omitempty"`
}

// ReadResponse is the answer of POST /v1/read. With a callback the
// service answers only a request id, found in Metadata.RequestID.
type ReadResponse struct {
	Metadata ReadMetadata `json:"metadata"`
	Results  ReadResults  `json:"results"`
}

// DecodeReadResponse decodes the JSON answer of POST /v1/read. Unknown
// fields are ignored; a body that is not a JSON object is an error.
func DecodeReadResponse(data []byte) (*ReadResponse, error) {
	var out ReadResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode read response: %w", err)
	}
	return &out, nil
}

// Read sends a document to POST /v1/read and returns its analysis.
// Options and body are checked before anything is sent.
func (c *Client) Read(ctx context.Context, in ReadRequest, opts ReadOptions) (*ReadResponse, error) {
	if err := opts.CheckRequest(); err != nil {
		return nil, err
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	if opts.Callback != "" {
		var acc acceptedResponse
		if err := c.doJSON(ctx, http.MethodPost, PathRead, opts.Query(), in, &acc, authDefault); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		return &ReadResponse{Metadata: ReadMetadata{RequestID: acc.RequestID}}, nil
	}
	var out ReadResponse
	if err := c.doJSON(ctx, http.MethodPost, PathRead, opts.Query(), in, &out, authDefault); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return &out, nil
}
