package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
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

	var sc statusCoder
	if errors.As(err, &sc) && sc.StatusCode() != 0 {
		return statusWords(sc.StatusCode())
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
