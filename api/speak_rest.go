package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// SpeakRequest is the JSON body of a batch synthesis.
type SpeakRequest struct {
	Text string `json:"text"`
}

// SpeakResponse is the answer of a batch synthesis. Body streams the
// audio as the service sends it, so playback can start on the first
// bytes; the caller must close it. The other fields come from the
// response headers, which the service spells with a dg- prefix (an x-dg-
// prefix or the bare name are read too).
type SpeakResponse struct {
	Body        io.ReadCloser
	ContentType string
	RequestID   string
	ModelName   string
	ModelUUID   string
	// CharCount is the number of characters billed, -1 when the service
	// did not say.
	CharCount int
	// Header holds every response header as sent.
	Header http.Header
}

// Close closes the body.
func (r *SpeakResponse) Close() error { return r.Body.Close() }

// Response headers of a batch synthesis, without their dg- prefix.
const (
	speakHeaderRequestID = "request-id"
	speakHeaderModelName = "model-name"
	speakHeaderModelUUID = "model-uuid"
	speakHeaderCharCount = "char-count"
)

// SpeakHeader returns the value of a header of a synthesis answer: the
// bare name, else with the dg- prefix, else with the x-dg- prefix.
func SpeakHeader(h http.Header, name string) string {
	for _, k := range []string{name, "dg-" + name, "x-dg-" + name} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return v
		}
	}
	return ""
}

// parseSpeakResponse reads the headers of a successful synthesis answer
// around its body.
func parseSpeakResponse(resp *http.Response) (*SpeakResponse, error) {
	r := &SpeakResponse{
		Body:        resp.Body,
		ContentType: resp.Header.Get("Content-Type"),
		RequestID:   SpeakHeader(resp.Header, speakHeaderRequestID),
		ModelName:   SpeakHeader(resp.Header, speakHeaderModelName),
		ModelUUID:   SpeakHeader(resp.Header, speakHeaderModelUUID),
		CharCount:   -1,
		Header:      resp.Header,
	}
	if v := SpeakHeader(resp.Header, speakHeaderCharCount); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			resp.Body.Close()
			return nil, fmt.Errorf("unreadable character count %q in the answer", v)
		}
		r.CharCount = n
	}
	return r, nil
}

// CallbackAccepted is the answer of a synthesis with a callback: the
// audio goes to the callback URL; the request id names it.
type CallbackAccepted struct {
	RequestID string `json:"request_id"`
}

// Speak synthesizes text with a general (aura) voice through POST
// /v1/speak. The options and the text limits of the voice are checked
// before the request leaves. The audio streams in the response body. With
// a callback, the body is the service's JSON acknowledgement; read it
// with DecodeCallbackAccepted.
func (c *Client) Speak(ctx context.Context, text string, opts SpeakOptions) (*SpeakResponse, error) {
	if err := opts.CheckRequest(Batch); err != nil {
		return nil, err
	}
	if err := CheckSpeakText(opts.Model, text); err != nil {
		return nil, err
	}
	r, err := c.speak(ctx, PathSpeak, text, opts.Query())
	if err != nil {
		return nil, fmt.Errorf("speak: %w", err)
	}
	return r, nil
}

// SpeakV2 synthesizes text with a turn-based (flux) voice through POST
// /v2/speak, the batch form of the turn-based voices. The options are
// checked before the request leaves, and empty text is refused.
func (c *Client) SpeakV2(ctx context.Context, text string, opts SpeakV2Options) (*SpeakResponse, error) {
	if err := opts.CheckRequest(Batch); err != nil {
		return nil, err
	}
	if err := checkTextNotEmpty(text); err != nil {
		return nil, err
	}
	r, err := c.speak(ctx, PathSpeakV2, text, opts.Query())
	if err != nil {
		return nil, fmt.Errorf("speak v2: %w", err)
	}
	return r, nil
}

func (c *Client) speak(ctx context.Context, path, text string, q url.Values) (*SpeakResponse, error) {
	body, err := json.Marshal(SpeakRequest{Text: text})
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, http.MethodPost, path, q, bytes.NewReader(body), "application/json", authDefault)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return parseSpeakResponse(resp)
}

// DecodeCallbackAccepted reads the acknowledgement of a synthesis with a
// callback from its response, and closes the body.
func DecodeCallbackAccepted(r *SpeakResponse) (*CallbackAccepted, error) {
	defer r.Body.Close()
	var out CallbackAccepted
	if err := json.NewDecoder(io.LimitReader(r.Body, maxErrorBody)).Decode(&out); err != nil {
		return nil, fmt.Errorf("unreadable callback acknowledgement: %w", err)
	}
	if out.RequestID == "" {
		out.RequestID = r.RequestID
	}
	return &out, nil
}
