package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// statusError is an error that carries an HTTP status, as the api
// package's errors do.
type statusError int

func (e statusError) Error() string   { return fmt.Sprintf("%d %s", int(e), http.StatusText(int(e))) }
func (e statusError) StatusCode() int { return int(e) }

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// refusedAddress returns a loopback address where nothing listens: one
// that was just listened on and closed.
func refusedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestPlainError(t *testing.T) {
	addr := refusedAddress(t)
	_, httpErr := http.Get("http://" + addr + "/v1/models?secret=hunter2")
	if httpErr == nil {
		t.Fatalf("GET %s succeeded; expected connection refused", addr)
	}
	var d net.Dialer
	_, dialErr := d.DialContext(context.Background(), "tcp", addr)
	if dialErr == nil {
		t.Fatalf("dial %s succeeded; expected connection refused", addr)
	}

	diskFull := store.MarkDiskFull(&fs.PathError{Op: "write", Path: "/home/me/out.wav", Err: syscall.ENOSPC})
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"no local engine in this build", fmt.Errorf("connect: %w", sessions.ErrNoLocalEngine),
			"This build of Earshot has no local engine, so it needs the hosted service: add an API key in Settings, or set " + sessions.EnvAPIKey + "."},
		{"not saved", &sessions.SaveFailedEvent{What: "a caption", Err: fmt.Errorf("disk: %w", context.DeadlineExceeded)},
			"Could not save a caption to history: the service did not answer in time."},
		{"not saved, the disk full", &sessions.SaveFailedEvent{What: "the synthesis", Err: diskFull},
			"The disk is full: the synthesis was not saved to history. Free some space, or save it as a file."},
		{"several not saved, the disk full", &sessions.SaveFailedEvent{What: "12 captions and the audio", Plural: true, Err: diskFull},
			"The disk is full: 12 captions and the audio were not saved to history. Free some space, or save them as a file."},
		{"waiting for room", &sessions.SaveFailedEvent{What: "3 captions", Plural: true, Waiting: true, Err: diskFull},
			"The disk is full: waiting to write 3 captions to history, kept in memory until there is room. Free some space."},
		{"a file on a full disk", fmt.Errorf("save out.wav: %w", diskFull), "The disk is full, so nothing was saved. Free some space, and try again."},
		{"deadline", context.DeadlineExceeded, "The service did not answer in time."},
		{"wrapped deadline", fmt.Errorf("list models: %w", context.DeadlineExceeded), "The service did not answer in time."},
		{"net timeout", &url.Error{Op: "Get", URL: "http://h/", Err: timeoutError{}}, "The service did not answer in time."},
		{"cancelled", fmt.Errorf("list models: %w", context.Canceled), "The request was cancelled."},
		{"refused over HTTP", fmt.Errorf("list models: %w", httpErr), "Cannot reach the service at http://" + addr + ". Nothing is listening there."},
		{"refused dial", dialErr, "Cannot reach the service at " + addr + ". Nothing is listening there."},
		{"refused, no address", fmt.Errorf("connect: %w", syscall.ECONNREFUSED), "Cannot reach the service. Nothing is listening at its address."},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), "The connection to the service was cut off."},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443}, Err: syscall.ENETUNREACH}, "Cannot reach the service at 192.0.2.1:443. The network is unreachable."},
		{"dns", &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}, `Cannot find the service's host "api.example.invalid". Check the address and the network.`},
		{"401", fmt.Errorf("list models: %w", statusError(401)), "The service did not accept the API key (HTTP 401 Unauthorized)."},
		{"403", statusError(403), "The service did not accept the API key (HTTP 403 Forbidden)."},
		{"404", statusError(404), "The service does not offer this (HTTP 404 Not Found)."},
		{"429", statusError(429), "The service is busy; try again in a moment (HTTP 429 Too Many Requests)."},
		{"500", statusError(500), "The service ran into a problem of its own (HTTP 500 Internal Server Error)."},
		{"400", statusError(400), "The service refused the request (HTTP 400 Bad Request)."},
		{"400 with the service's words", fmt.Errorf("speak: %w", &api.Error{Status: 400, Code: "INVALID_QUERY_PARAMETER", Message: "Speed must be between 0.7 and 1.5"}),
			"The service refused the request: speed must be between 0.7 and 1.5."},
		{"a full path typed in the save dialog", saveChoiceError{&fs.PathError{Op: "open", Path: "/home/me//tmp/x.srt", Err: fs.ErrNotExist}},
			"There is no such folder. Type only the file's name, and pick its folder in the dialog's list."},
		{"speaker missing", &sessions.SpeakerError{Err: fmt.Errorf("audio: open speaker: %w: miniaudio: Failed to open backend device ([ALSA] snd_pcm_open() failed)", device.ErrNoOutputDevice)},
			"No speaker available: no speaker or headphones were found."},
		{"a synthesis partly spoken", fmt.Errorf("speak: %w", &sessions.PartialSynthesisError{SpokenWords: 1024, Words: 3003, Audio: 356e9,
			Unspoken: "And the next words of the text that were never spoken at all", Err: fmt.Errorf("the stream ended: %w", statusError(500))}),
			"Only 1024 of the 3003 words were spoken (356.0 s of audio): it stopped at “And the next words of the text that…”. The service ran into a problem of its own (HTTP 500 Internal Server Error)."},
		{"live captions whose end was not transcribed", &sessions.UntranscribedError{Audio: 3200 * time.Millisecond, Err: sessions.ErrServiceSilent},
			"The last 3.2 s of audio were not transcribed. The service stopped answering."},
		{"a conversation cut off at Stop", fmt.Errorf("conversation: %w", &sessions.UntranscribedError{Audio: 1500 * time.Millisecond, Err: fmt.Errorf("read: %w", syscall.ECONNRESET)}),
			"The last 1.5 s of audio were not transcribed. The connection to the service was cut off."},
		{"microphone missing", fmt.Errorf("audio: open microphone: %w: miniaudio: Failed to open backend device", device.ErrNoDevice),
			"No microphone found. Connect one, or use Open file… to transcribe a recording."},
		{"not a microphone", fmt.Errorf("captions: %w: 2.02s of audio in 10ms", sessions.ErrNotRealTime),
			"This input delivers audio faster than real time, so it is not a microphone. Pick another in Settings, or use Open file… to transcribe a recording."},
		{"unknown status", statusError(499), "The service refused the request (HTTP 499)."},
		{"status zero falls through", statusError(0), "Something went wrong: 0."},
		{"other", errors.New("unexpected end of JSON input"), "Something went wrong: Unexpected end of JSON input."},
		{"other, punctuated", errors.New("stream closed!"), "Something went wrong: Stream closed!"},
		{"empty message", errors.New(""), "Something went wrong: No details were given."},
		{"undecodable file, its name kept", &sessions.FileError{Name: "corrupt.wav", Err: fmt.Errorf("audio: decode: %w", audioUndecodable(t))},
			"“corrupt.wav”: this is not audio Earshot can read (WAV data chunk comes before the fmt chunk). Open a WAV, MP3, FLAC, Ogg, AAC, M4A, MP4, MOV, WebM or MKV recording."},
		{"missing file, its name kept", &sessions.FileError{Name: "Talk.flac", Err: fs.ErrNotExist},
			"“Talk.flac”: the file could not be found. Was it moved or deleted?"},
		// It is the file that is empty, not the options that are wrong.
		{"empty file", &sessions.FileError{Name: "empty.wav", Err: sessions.ErrEmptyFile},
			"“empty.wav”: the file is empty (0 bytes): there is no audio in it to transcribe."},
		{"video without sound", &sessions.FileError{Name: "screen.mp4", Err: fmt.Errorf("probe: %w", audio.ErrNoAudioTrack)},
			"“screen.mp4”: the file has no audio track: there is no sound in it to transcribe."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainError(tt.err); got != tt.want {
				t.Errorf("plainError(%v)\n got %q\nwant %q", tt.err, got, tt.want)
			}
		})
	}
}

// audioUndecodable is what the audio package says of a WAV file without
// its format chunk.
func audioUndecodable(t *testing.T) error {
	t.Helper()
	wav := []byte("RIFF\x24\x00\x00\x00WAVEdata\x00\x00\x00\x00")
	_, err := audio.Decode(t.Context(), bytes.NewReader(wav))
	if !errors.Is(err, audio.ErrUndecodable) {
		t.Fatalf("decoding a WAV file without fmt: %v, want ErrUndecodable", err)
	}
	return err
}

// TestPlainErrorHidesURLSecrets checks that only the scheme and host of a
// failed request's URL are shown: a query string may carry a token.
func TestPlainErrorHidesURLSecrets(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v1/models?token=hunter2", Err: syscall.ECONNREFUSED}
	got := plainError(err)
	if strings.Contains(got, "hunter2") || strings.Contains(got, "/v1/models") {
		t.Errorf("plainError shows the URL's path or query: %q", got)
	}
	if !strings.Contains(got, "http://127.0.0.1:1") {
		t.Errorf("plainError does not name the address: %q", got)
	}
}

// TestDocumentErrorWords: what reading or fetching a document raises
// reads in plain words, the reader's own errors as it returns them.
func TestDocumentErrorWords(t *testing.T) {
	_, empty := document.Extract(t.Context(), "notes.txt", []byte(" \n\n "))
	_, legacy := document.Extract(t.Context(), "report.doc", append([]byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), make([]byte, 512)...))
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no text", empty, "There is no text in this document."},
		{"scanned", fmt.Errorf("read: %w", &document.ScannedPDFError{Name: "scan.pdf", Pages: 3}),
			"This PDF is a scan: its pages are pictures, with no text to read. Run it through text recognition (OCR, for example ocrmypdf) and open the copy it makes."},
		{"not found", &document.HTTPError{URL: "https://example.com/x", StatusCode: 404, Status: "404 Not Found"},
			"There is no page at this address (the site answered 404 Not Found). Check the address."},
		{"login", &document.HTTPError{URL: "https://example.com/x", StatusCode: 403, Status: "403 Forbidden"},
			"The site refused to give this page (403 Forbidden): it may need a login. Open it in a browser, save it, and open the file."},
		{"too large", fmt.Errorf("big.pdf: %w (60.0 MiB; at most 50.0 MiB)", document.ErrTooLarge),
			"This document is too large to open: Earshot reads documents of up to 50 MB."},
		{"password", fmt.Errorf("secret.pdf: %w", document.ErrEncrypted),
			"This document is protected by a password. Open it, save a copy without the password, and open that."},
		{"damaged", fmt.Errorf("x.docx: %w", document.ErrCorrupt), "This document is damaged, or is not the kind of document its name says."},
		{"no pdftotext", &document.ToolMissingError{Tool: "pdftotext", Package: "poppler-utils"},
			"Reading PDFs needs the program pdftotext, which is not installed. Install the package poppler-utils (sudo apt install poppler-utils)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plainError(tt.err); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	notText := "Earshot cannot analyse this as text: it reads PDF, Word (.docx), OpenDocument (.odt), web pages, EPUB e-books, RTF, Markdown and plain text, of up to 10 MB of text."
	if got := analysisWords(fmt.Errorf("x: %w", sessions.ErrNotText), ""); got != notText {
		t.Errorf("not text: %q", got)
	}
	var ue *document.UnsupportedError
	if !errors.As(legacy, &ue) {
		t.Fatalf("a legacy Word file: %v, want an UnsupportedError", legacy)
	}
	if got := plainError(legacy); !strings.HasPrefix(got, "This is "+ue.Kind+", which Earshot cannot read as text.") || strings.Contains(got, "report.doc is") {
		t.Errorf("a legacy Word file: %q", got)
	}
}

// TestSavedWords: the words that close a session say "saved to history"
// only when its final HistoryEvent says everything was; while captions
// wait for room, and once they are written, the status says so.
func TestSavedWords(t *testing.T) {
	full := store.MarkDiskFull(&fs.PathError{Op: "write", Path: "history.db-wal", Err: syscall.ENOSPC})
	lost := &sessions.HistoryEvent{Final: true, Keeping: sessions.Keeping{Err: &sessions.SaveFailedEvent{What: "the live captions", Plural: true, Err: full}}}
	kept := &sessions.HistoryEvent{Final: true, Keeping: sessions.Keeping{ID: 7}}
	inMemory := &sessions.HistoryEvent{Final: true, Keeping: sessions.Keeping{ID: 7, InMemory: true}}
	for _, tc := range []struct {
		name string
		h    *sessions.HistoryEvent
		want string
		imp  widget.Importance
	}{
		{"kept", kept, "Stopped. 3 captions saved to history.", widget.MediumImportance},
		{"no history", nil, "Stopped. 3 captions.", widget.MediumImportance},
		{"history off", inMemory, "Stopped. 3 captions, kept until Earshot closes (history is off).", widget.MediumImportance},
		{"lost to a full disk", lost, "Stopped. 3 captions. The disk is full: the live captions were not saved to history. Free some space, or save them as a file.", widget.WarningImportance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, imp := savedWords("Stopped. 3 captions", tc.h); got != tc.want || imp != tc.imp {
				t.Errorf("savedWords = %q (%v), want %q (%v)", got, imp, tc.want, tc.imp)
			}
		})
	}

	waiting := &sessions.HistoryEvent{Keeping: sessions.Keeping{ID: 7, Waiting: 2, Err: &sessions.SaveFailedEvent{What: "2 captions", Plural: true, Waiting: true, Err: full}}}
	written := &sessions.HistoryEvent{Keeping: sessions.Keeping{ID: 7}}
	if got, imp := historyNotice(nil, waiting, "captions"); got != "The disk is full: waiting to write 2 captions to history, kept in memory until there is room. Free some space." || imp != widget.WarningImportance {
		t.Errorf("while waiting: %q (%v)", got, imp)
	}
	if got, imp := historyNotice(waiting, written, "captions"); got != "The disk has room again: the captions that waited are in history now." || imp != widget.SuccessImportance {
		t.Errorf("once written: %q (%v)", got, imp)
	}
	if got, _ := historyNotice(written, written, "captions"); got != "" {
		t.Errorf("nothing changed: %q", got)
	}
}

// TestEndedWords: a live session that ended with its last audio never
// transcribed says what it kept and what it did not, as a warning; a
// failure is left to be shown as one.
func TestEndedWords(t *testing.T) {
	kept := &sessions.HistoryEvent{Keeping: sessions.Keeping{ID: 7}}
	tests := []struct {
		name  string
		err   error
		want  string
		imp   widget.Importance
		ended bool
	}{
		{"whole", nil, "Stopped. 12 captions saved to history.", widget.MediumImportance, true},
		{"partial", &sessions.UntranscribedError{Audio: 2 * time.Second, Err: sessions.ErrServiceSlow},
			"Stopped. 12 captions saved to history. The last 2.0 s of audio were not transcribed. The service was still working after 2 minutes.", widget.WarningImportance, true},
		{"failed", statusError(500), "", widget.DangerImportance, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, imp, ended := endedWords("Stopped. 12 captions", kept, tt.err)
			if text != tt.want || imp != tt.imp || ended != tt.ended {
				t.Errorf("endedWords = %q, %v, %v; want %q, %v, %v", text, imp, ended, tt.want, tt.imp, tt.ended)
			}
		})
	}
}
