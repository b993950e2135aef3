package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2/widget"

	"github.com/earshot-app/earshot/api"
	"github.com/earshot-app/earshot/audio"
	"github.com/earshot-app/earshot/audio/device"
	"github.com/earshot-app/earshot/internal/document"
	"github.com/earshot-app/earshot/internal/llm"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

// statusCoder is an error that carries the HTTP status the service answered
// with, such as *api.Error. Declared here, so ui needs no import to read it.
type statusCoder interface {
	StatusCode() int
}

// timeouter is an error that knows it is a timeout, such as net.Error.
type timeouter interface {
	Timeout() bool
}

// plainError turns an error into words a person can act on. It is the one
// place where errors become text in the UI: every view shows errors through
// it, so the same failure always reads the same way. The raw error is for
// the log, not the window.
func plainError(err error) string {
	if err == nil {
		return ""
	}

	if words, ok := knownWords(err); ok {
		return words
	}
	var sc statusCoder
	if errors.As(err, &sc) && sc.StatusCode() != 0 {
		var ae *api.Error
		hasMessage := errors.As(err, &ae) && strings.TrimSpace(ae.Message) != ""
		if sc.StatusCode() == http.StatusBadRequest && hasMessage {
			// The service's own explanation says what to change; "HTTP
			// 400 Bad Request" around it says nothing more.
			return "The service refused the request: " + lowerFirst(sentence(ae.Message))
		}
		words := statusWords(sc.StatusCode())
		if hasMessage {
			words += " " + sentence(ae.Message)
		}
		return words
	}

	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "The service did not answer in time."
	case errors.Is(err, context.Canceled):
		return "The request was cancelled."
	case errors.Is(err, syscall.ECONNREFUSED):
		if where := address(err); where != "" {
			return fmt.Sprintf("Cannot reach the service at %s. Nothing is listening there.", where)
		}
		return "Cannot reach the service. Nothing is listening at its address."
	}

	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("Cannot find the service's host %q. Check the address and the network.", dns.Name)
	}
	var to timeouter
	if errors.As(err, &to) && to.Timeout() {
		return "The service did not answer in time."
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return "The connection to the service was cut off."
	}
	if errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) {
		if where := address(err); where != "" {
			return fmt.Sprintf("Cannot reach the service at %s. The network is unreachable.", where)
		}
		return "Cannot reach the service. The network is unreachable."
	}

	return "Something went wrong: " + sentence(err.Error())
}

// knownWords words the errors of Earshot's own layers that a person can
// act on: a missing key, the keyring, the microphone, a file, options the
// service would refuse.
func knownWords(err error) (string, bool) {
	var fe *sessions.FileError
	if errors.As(err, &fe) {
		// The name as it is, quoted, never capitalised.
		return "“" + fe.Name + "”: " + lowerFirst(plainError(fe.Err)), true
	}
	var save *sessions.SaveError
	if errors.As(err, &save) {
		return "Could not save “" + filepath.Base(save.Path) + "”: " + saveWords(save), true
	}
	var sce saveChoiceError
	if errors.As(err, &sce) && errors.Is(err, fs.ErrNotExist) {
		return "There is no such folder. Type only the file's name, and pick its folder in the dialog's list.", true
	}
	var spk *sessions.SpeakerError
	if errors.As(err, &spk) {
		return speakerWords(spk.Err), true
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return sentence(le.Error()), true
	}
	var partial *sessions.PartialSynthesisError
	if errors.As(err, &partial) {
		return partial.Summary() + " " + plainError(partial.Err), true
	}
	var untranscribed *sessions.UntranscribedError
	if errors.As(err, &untranscribed) {
		return untranscribed.Summary() + " " + plainError(untranscribed.Err), true
	}
	var rec *store.Recovery
	if errors.As(err, &rec) {
		return recoveryWords(rec), true
	}
	if words, ok := documentWords(err); ok {
		return words, true
	}
	switch {
	case errors.Is(err, sessions.ErrInvalidSynthesis):
		return sentence(err.Error()), true
	case errors.Is(err, sessions.ErrServiceSilent), errors.Is(err, sessions.ErrServiceSlow), errors.Is(err, sessions.ErrNotConnected):
		return sentence(err.Error()), true
	case errors.Is(err, sessions.ErrNoKey):
		return "No API key is set. Add one in Settings, or set " + sessions.EnvAPIKey + ".", true
	case errors.Is(err, sessions.ErrNoLocalEngine):
		return "This build of Earshot has no local engine, so it needs the hosted service: add an API key in Settings, or set " + sessions.EnvAPIKey + ".", true
	case errors.Is(err, sessions.ErrNoAudio):
		return "This entry has no audio to run again: its audio was not kept, and its file is gone.", true
	case errors.Is(err, store.ErrSecretServiceUnavailable):
		return "No Secret Service (keyring) was found, so the key is kept for this session only.", true
	case errors.Is(err, store.ErrInvalid):
		return "A setting is not valid, so nothing was saved. Check the fields of the Settings tab.", true
	case errors.Is(err, device.ErrNoAudioBackend):
		return "No audio system is running: Earshot hears the microphone through PipeWire, PulseAudio or ALSA.", true
	case errors.Is(err, device.ErrNoDevice):
		return "No microphone found. Connect one, or use Open file… to transcribe a recording.", true
	case errors.Is(err, sessions.ErrNotRealTime):
		return "This input delivers audio faster than real time, so it is not a microphone. Pick another in Settings, or use Open file… to transcribe a recording.", true
	case errors.Is(err, device.ErrDeviceUnavailable):
		return "The microphone is busy or could not be opened. Close the programs using it, or pick another.", true
	case errors.Is(err, device.ErrPermissionDenied):
		return "Permission to use the microphone was denied. Allow it in the system's privacy settings.", true
	case errors.Is(err, device.ErrDeviceStopped):
		return "The microphone stopped delivering audio. Was it unplugged?", true
	case errors.Is(err, api.ErrUndecodableAudio):
		return "The service could not decode the audio. Is it an audio file?", true
	case errors.Is(err, fs.ErrNotExist):
		return "The file could not be found. Was it moved or deleted?", true
	case errors.Is(err, fs.ErrPermission):
		return "Earshot is not allowed to open this file.", true
	}
	switch {
	case errors.Is(err, sessions.ErrEmptyFile):
		return "The file is empty (0 bytes): there is no audio in it to transcribe.", true
	case errors.Is(err, audio.ErrNoAudioTrack):
		return "The file has no audio track: there is no sound in it to transcribe.", true
	case errors.Is(err, audio.ErrUndecodable):
		why := err.Error()
		if _, after, ok := strings.Cut(why, audio.ErrUndecodable.Error()+": "); ok {
			why = after
		}
		return "This is not audio Earshot can read (" + strings.TrimSuffix(strings.TrimSpace(why), ".") + "). Open a WAV, MP3, FLAC, Ogg, AAC, M4A, MP4, MOV, WebM or MKV recording.", true
	case errors.Is(err, sessions.ErrFolder):
		return "This is a folder, not a file. Open a file inside it.", true
	case errors.Is(err, audio.ErrTooLarge):
		return "This recording is too long to open at once. Split it into shorter files.", true
	}
	var sf *sessions.SaveFailedEvent
	if errors.As(err, &sf) {
		return unsavedWords(sf), true
	}
	if errors.Is(err, store.ErrDiskFull) {
		return "The disk is full, so nothing was saved. Free some space, and try again.", true
	}
	var oe *api.OptionError
	if errors.As(err, &oe) {
		return "The service would refuse these options: " + sentence(oe.Error()), true
	}
	return "", false
}

// saveWords says why a file could not be saved, continuing a sentence.
func saveWords(e *sessions.SaveError) string {
	dir := filepath.Dir(e.Path)
	switch {
	case errors.Is(e.Err, syscall.EROFS):
		return "its folder, " + dir + ", is on a disk that cannot be written to. Choose another folder."
	case errors.Is(e.Err, fs.ErrPermission):
		return "Earshot may not write in its folder, " + dir + ". Choose another folder."
	case errors.Is(e.Err, syscall.ENOSPC), errors.Is(e.Err, syscall.EDQUOT):
		return "the disk is full. Free some space, or choose another folder."
	case errors.Is(e.Err, fs.ErrNotExist):
		return "its folder, " + dir + ", does not exist."
	case errors.Is(e.Err, syscall.EISDIR):
		return "a folder of that name is there. Choose another name."
	}
	return lowerFirst(plainError(e.Err))
}

// unsavedWords says what history does not hold, and why: a full disk by
// its name, with what to do.
func unsavedWords(sf *sessions.SaveFailedEvent) string {
	was, it := "was", "it"
	if sf.Plural {
		was, it = "were", "them"
	}
	switch {
	case sf.Waiting:
		return "The disk is full: waiting to write " + sf.What + " to history, kept in memory until there is room. Free some space."
	case errors.Is(sf.Err, store.ErrDiskFull):
		return "The disk is full: " + sf.What + " " + was + " not saved to history. Free some space, or save " + it + " as a file."
	case sf.Err == nil:
		return "Could not save " + sf.What + " to history."
	}
	return "Could not save " + sf.What + " to history: " + lowerFirst(plainError(sf.Err))
}

// savedWords ends the words that close a session (done, as "Stopped. 12
// captions") with what history holds of it, from the session's final
// HistoryEvent h: "saved to history" only when everything was kept for
// good, that it is kept until Earshot closes when history is off, and
// otherwise why not, with the importance to show them at. Without
// history (h nil) nothing is claimed.
func savedWords(done string, h *sessions.HistoryEvent) (string, widget.Importance) {
	switch {
	case h == nil:
		return done + ".", widget.MediumImportance
	case h.Kept():
		return done + " saved to history.", widget.MediumImportance
	case h.Written():
		return done + ", " + keptForSession + ".", widget.MediumImportance
	}
	return done + ". " + plainError(h.Err), widget.WarningImportance
}

// endedWords says how a live session (captions, a conversation) ended:
// done, whether it was saved (savedWords) and, when the service left the
// last of its audio untranscribed, how much and why. ended is false when
// err is a failure, to be shown as one.
func endedWords(done string, h *sessions.HistoryEvent, err error) (text string, imp widget.Importance, ended bool) {
	var untranscribed *sessions.UntranscribedError
	if err != nil && !errors.As(err, &untranscribed) {
		return "", widget.DangerImportance, false
	}
	text, imp = savedWords(done, h)
	if untranscribed != nil {
		text, imp = text+" "+plainError(err), widget.WarningImportance
	}
	return text, imp, true
}

// keptForSession says where a session is kept while history is in
// memory (Keeping.InMemory): never "kept in history".
const keptForSession = "kept until Earshot closes (history is off)"

// historyNotice says what a running session's HistoryEvent h changes,
// after prev, with the importance to show it at: while writes wait for
// room on a full disk, why; once they are written after waiting, that
// they are, of what ("captions"); else "".
func historyNotice(prev, h *sessions.HistoryEvent, what string) (string, widget.Importance) {
	switch {
	case h.Waiting > 0 && h.Err != nil:
		return plainError(h.Err), widget.WarningImportance
	case prev != nil && prev.Waiting > 0 && h.Waiting == 0 && h.Err == nil:
		return "The disk has room again: the " + what + " that waited are in history now.", widget.SuccessImportance
	}
	return "", widget.MediumImportance
}

// statusWords says what an HTTP status from the service means for the user.
func statusWords(status int) string {
	code := fmt.Sprintf("HTTP %d", status)
	if text := http.StatusText(status); text != "" {
		code += " " + text
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Sprintf("The service did not accept the API key (%s).", code)
	case status == http.StatusTooManyRequests:
		return fmt.Sprintf("The service is busy; try again in a moment (%s).", code)
	case status == http.StatusNotFound:
		return fmt.Sprintf("The service does not offer this (%s).", code)
	case status >= 500:
		return fmt.Sprintf("The service ran into a problem of its own (%s).", code)
	default:
		return fmt.Sprintf("The service refused the request (%s).", code)
	}
}

// address names where a failed connection was going: the scheme and host
// of a request's URL (never its path or query, which may carry secrets),
// else the dialled network address.
func address(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		return oe.Addr.String()
	}
	return ""
}

// sentence trims s, capitalises its first letter and ends it with a full
// stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "No details were given."
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if last, _ := utf8.DecodeLastRuneInString(s); !unicode.IsPunct(last) {
		s += "."
	}
	return s
}

// lowerFirst lowers the first letter of s, to continue a sentence with it.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsUpper(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// speakerWords says what is wrong with the speaker, from the audio
// layer's error.
func speakerWords(err error) string {
	switch {
	case errors.Is(err, device.ErrNoAudioBackend):
		return "No audio system is running, so nothing can be played: Earshot plays through PipeWire, PulseAudio or ALSA."
	case errors.Is(err, device.ErrNoOutputDevice):
		return "No speaker available: no speaker or headphones were found."
	case errors.Is(err, device.ErrOutputStopped):
		return "The speaker stopped playing. Was it unplugged?"
	}
	return "The speaker is busy or could not be opened. Close the programs using it, or pick another in Settings."
}

// documentWords words the errors of reading and fetching a document
// (package document) for the Analyze tab.
func documentWords(err error) (string, bool) {
	var scanned *document.ScannedPDFError
	if errors.As(err, &scanned) {
		return "This PDF is a scan: its pages are pictures, with no text to read. Run it through text recognition (OCR, for example ocrmypdf) and open the copy it makes.", true
	}
	var unsupported *document.UnsupportedError
	if errors.As(err, &unsupported) {
		words := "This is " + unsupported.Kind + ", which Earshot cannot read as text."
		if unsupported.Hint != "" {
			words += " " + sentence(unsupported.Hint)
		} else {
			words += " Open a PDF, Word (.docx), OpenDocument (.odt), web page, EPUB, RTF, Markdown or text file."
		}
		return words, true
	}
	var he *document.HTTPError
	if errors.As(err, &he) {
		switch {
		case he.StatusCode == http.StatusNotFound || he.StatusCode == http.StatusGone:
			return fmt.Sprintf("There is no page at this address (the site answered %s). Check the address.", he.Status), true
		case he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden:
			return fmt.Sprintf("The site refused to give this page (%s): it may need a login. Open it in a browser, save it, and open the file.", he.Status), true
		case he.StatusCode >= 500:
			return fmt.Sprintf("The site ran into a problem of its own (%s). Try again later.", he.Status), true
		}
		return fmt.Sprintf("The site did not give the page (%s).", he.Status), true
	}
	var tm *document.ToolMissingError
	if errors.As(err, &tm) {
		return fmt.Sprintf("Reading PDFs needs the program %s, which is not installed. Install the package %s (sudo apt install %s).", tm.Tool, tm.Package, tm.Package), true
	}
	switch {
	case errors.Is(err, document.ErrEmpty):
		return "There is no text in this document.", true
	case errors.Is(err, document.ErrEncrypted):
		return "This document is protected by a password. Open it, save a copy without the password, and open that.", true
	case errors.Is(err, document.ErrCorrupt):
		return "This document is damaged, or is not the kind of document its name says.", true
	case errors.Is(err, document.ErrTooLarge):
		return fmt.Sprintf("This document is too large to open: Earshot reads documents of up to %d MB.", document.MaxBytes>>20), true
	}
	return "", false
}
