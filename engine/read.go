package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/engine/intel"
	"github.com/earshot-app/earshot/internal/textseg"
)

// Limits of text intelligence (/v1/read).
const (
	// maxReadBytes bounds a document, sent or fetched. The service's limit
	// is in tokens (api.ReadTokenLimit); 10 MiB is far above any document
	// within it, and keeps a hostile body or URL from filling memory.
	maxReadBytes = 10 << 20
	// readFetchTimeout bounds fetching a document named by url, from the
	// request to the last byte.
	readFetchTimeout = 10 * time.Second
	// maxReadRedirects bounds the redirects a fetch follows.
	maxReadRedirects = 5
)

// Errors of reading a /v1/read body, each answered with its own code.
var (
	errUnsupportedMedia = errors.New("unsupported media type")
	errTokenLimit       = errors.New("token limit exceeded")
)

// mediaTypeError is a /v1/read body of a Content-Type the engine does not
// read. It matches errUnsupportedMedia.
type mediaTypeError struct {
	// header is the Content-Type as sent, when it does not parse.
	header string
	// mediaType is the media type it names, when it parses.
	mediaType string
}

// detail says which Content-Type is refused, and what to send instead.
func (e *mediaTypeError) detail() string {
	if e.mediaType == "" {
		return strconv.Quote(e.header)
	}
	return e.mediaType + `; send application/json ({"text": ...} or {"url": ...}) or text/plain`
}

func (e *mediaTypeError) Error() string        { return errUnsupportedMedia.Error() + ": " + e.detail() }
func (e *mediaTypeError) Is(target error) bool { return target == errUnsupportedMedia }

// tokenLimitError is a document longer than one request analyses. It
// matches errTokenLimit.
type tokenLimitError struct {
	tokens, limit int
}

// detail says how long the document is and how long it may be.
func (e *tokenLimitError) detail() string {
	return fmt.Sprintf("the input is %d tokens; at most %d are analysed in one request", e.tokens, e.limit)
}

func (e *tokenLimitError) Error() string        { return errTokenLimit.Error() + ": " + e.detail() }
func (e *tokenLimitError) Is(target error) bool { return target == errTokenLimit }

// readFetchClient fetches the documents /v1/read names by url. It follows
// a few redirects, to http and https only. Its transport is the default
// one, whose idle connections the process closes as it does for batch
// audio fetched by url.
var readFetchClient = &http.Client{
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxReadRedirects {
			return fmt.Errorf("more than %d redirects", maxReadRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to a %s URL", req.URL.Scheme)
		}
		return nil
	},
}

// handleRead serves POST /v1/read: text intelligence on a document sent as
// {"text": ...}, as text/plain, or named by {"url": ...}.
func (e *Engine) handleRead(w http.ResponseWriter, r *http.Request) {
	opts, unknown, err := api.ParseReadOptions(r.URL.Query())
	if err != nil {
		writeOptionError(w, r, err)
		return
	}
	if len(unknown) > 0 {
		e.log.Debug("ignored unknown read parameters", "params", unknown)
	}
	if err := opts.Validate(); err != nil {
		writeOptionError(w, r, err)
		return
	}
	if err := readNotOffered(&opts); err != nil {
		writeOptionError(w, r, err)
		return
	}
	ctx := r.Context()
	text, err := readDocument(ctx, w, r)
	if err != nil {
		writeReadError(w, r, err)
		return
	}
	tokens := textseg.Tokens(text)
	if tokens > api.ReadTokenLimit {
		writeReadError(w, r, &tokenLimitError{tokens: tokens, limit: api.ReadTokenLimit})
		return
	}
	iopts := intelOptions(opts.Summarize != "", opts.Sentiment, opts.Topics, opts.Intents)
	res, err := intel.Analyze(ctx, text, iopts)
	if err != nil {
		if ctx.Err() != nil {
			return // the client went away
		}
		e.log.Error("text analysis failed", "request_id", requestID(ctx), "err", err)
		writeError(w, r, http.StatusInternalServerError, api.CodeInternalServerError, "The analysis failed: "+err.Error())
		return
	}
	resp := &api.ReadResponse{Metadata: api.ReadMetadata{
		RequestID: requestID(ctx),
		Created:   e.clock.Now().UTC().Format(createdLayout),
		Language:  api.ReadLanguage(opts.Language),
	}}
	out := convertIntel(res, tokens, identityWords, iopts)
	resp.Metadata.SummaryInfo = out.summaryInfo
	resp.Metadata.SentimentInfo = out.sentimentInfo
	resp.Metadata.TopicsInfo = out.topicsInfo
	resp.Metadata.IntentsInfo = out.intentsInfo
	if opts.Summarize != "" {
		resp.Results.Summary = &api.ReadSummary{Text: res.Summary}
	}
	resp.Results.Sentiments = out.sentiments
	resp.Results.Topics = out.topics
	resp.Results.Intents = out.intents
	writeJSON(w, http.StatusOK, resp)
}

// readNotOffered refuses the parameters of /v1/read the engine does not
// implement, rather than answer as if it had honoured them.
func readNotOffered(o *api.ReadOptions) error {
	switch {
	case len(o.CustomTopic) > 0:
		return notOffered("custom_topic")
	case len(o.CustomIntent) > 0:
		return notOffered("custom_intent")
	case o.Callback != "" || o.CallbackMethod != "":
		return notOffered("callback")
	}
	return nil
}

// readDocument returns the document of a /v1/read request: the text of a
// JSON body, a text/plain body, or what a JSON {"url": ...} names.
func readDocument(ctx context.Context, w http.ResponseWriter, r *http.Request) (string, error) {
	text, docURL, err := parseReadBody(http.MaxBytesReader(w, r.Body, maxReadBytes), r.Header.Get("Content-Type"))
	if err != nil || docURL == "" {
		return text, err
	}
	return fetchDocument(ctx, docURL)
}

// parseReadBody reads a /v1/read body of the given Content-Type: it
// returns the document's text, or the URL that names it.
func parseReadBody(body io.Reader, contentType string) (text, docURL string, err error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && contentType != "" {
		return "", "", &mediaTypeError{header: contentType}
	}
	switch mt {
	case "text/plain":
		b, err := io.ReadAll(body)
		if err != nil {
			return "", "", err
		}
		text, err := checkText(b, errPayload, "the text/plain body")
		return text, "", err
	case "application/json", "":
	default:
		return "", "", &mediaTypeError{mediaType: mt}
	}
	var in struct {
		Text *string `json:"text"`
		URL  *string `json:"url"`
	}
	if err := json.NewDecoder(body).Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", "", err
		}
		return "", "", fmt.Errorf("%w: the JSON body must be {\"text\": \"...\"} or {\"url\": \"...\"}: %v", errPayload, err)
	}
	if (in.Text == nil) == (in.URL == nil) {
		return "", "", fmt.Errorf("%w: %s", errPayload, api.MsgReadTextOrURL)
	}
	if in.URL != nil {
		u, err := url.Parse(*in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", "", fmt.Errorf("%w: %q is not an http or https URL", errPayload, *in.URL)
		}
		return "", u.String(), nil
	}
	text, err = checkText([]byte(*in.Text), errPayload, "text")
	return text, "", err
}

// checkText accepts a document that holds some text and is UTF-8; kind is
// the error class of a refusal and what names the document in it.
func checkText(b []byte, kind error, what string) (string, error) {
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: %s is not UTF-8 text", kind, what)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", fmt.Errorf("%w: %s is empty", kind, what)
	}
	return string(b), nil
}

// fetchDocument fetches the plain-text document a /v1/read url names.
//
// The engine fetches what its caller names, as the hosted service does:
// the caller holds the key, and a desktop engine on loopback fetching a
// URL its user typed can reach nothing the user could not. Fetching is
// bounded (http and https only, 10 s, 10 MiB, five redirects) and only
// text is read: anything else is refused before it is analysed.
func fetchDocument(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an http or https URL", errPayload, raw)
	}
	fctx, cancel := context.WithTimeout(ctx, readFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errPayload, err)
	}
	req.Header.Set("Accept", "text/plain, text/*;q=0.5")
	resp, err := readFetchClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w: could not fetch %s: %v", errRemote, u.Redacted(), fetchFailure(ctx, fctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%w: fetching %s answered %s", errRemote, u.Redacted(), resp.Status)
	}
	if resp.ContentLength > maxReadBytes {
		return "", fmt.Errorf("%w: %s is %d bytes; the local engine fetches documents of at most %d MiB", errRemote, u.Redacted(), resp.ContentLength, maxReadBytes>>20)
	}
	declared, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err := textType(declared); err != nil {
		return "", fmt.Errorf("%w: %s is %v", errRemote, u.Redacted(), err)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReadBytes+1))
	if err != nil {
		return "", fmt.Errorf("%w: reading %s: %v", errRemote, u.Redacted(), fetchFailure(ctx, fctx, err))
	}
	if len(b) > maxReadBytes {
		return "", fmt.Errorf("%w: %s is larger than the %d MiB the local engine fetches", errRemote, u.Redacted(), maxReadBytes>>20)
	}
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(b))
	if sniffed != "text/plain" {
		return "", fmt.Errorf("%w: %s holds %s, not a plain-text document", errRemote, u.Redacted(), sniffed)
	}
	return checkText(b, errRemote, u.Redacted())
}

// textType accepts the declared type of a fetched document: any text but
// markup, or no type at all (the content is sniffed then).
func textType(mt string) error {
	switch {
	case mt == "", mt == "application/octet-stream":
		return nil // sniffed below
	case mt == "text/html", mt == "text/xml":
		return fmt.Errorf("%s, not a plain-text document", mt)
	case strings.HasPrefix(mt, "text/"):
		return nil
	}
	return fmt.Errorf("%s, not a plain-text document", mt)
}

// fetchFailure says why a fetch failed, naming the engine's own timeout
// rather than a bare "context deadline exceeded".
func fetchFailure(ctx, fctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within %v", readFetchTimeout)
	}
	return err
}

// writeReadError answers the failures of reading a /v1/read document.
func writeReadError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		mbe    *http.MaxBytesError
		tokens *tokenLimitError
		media  *mediaTypeError
	)
	switch {
	case errors.As(err, &mbe):
		writeError(w, r, http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge,
			fmt.Sprintf("The request body is larger than the local engine accepts (%d MiB).", maxReadBytes>>20))
	case errors.As(err, &tokens):
		writeError(w, r, http.StatusBadRequest, api.CodeTokenLimitExceeded, capitalise(tokens.detail())+".")
	case errors.As(err, &media):
		writeError(w, r, http.StatusUnsupportedMediaType, api.CodeUnsupportedMediaType, "Unsupported Content-Type "+media.detail()+".")
	case errors.Is(err, errRemote):
		writeError(w, r, http.StatusBadRequest, api.CodeRemoteContentError, err.Error())
	case errors.Is(err, errPayload):
		writeError(w, r, http.StatusBadRequest, api.CodePayloadError, err.Error())
	default:
		writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, "Bad Request: "+err.Error())
	}
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}
