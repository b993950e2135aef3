package api

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// queryReader reads typed values from the URL query of a request, as the
// service reads them on every endpoint (/v1/listen, /v2/listen, /v1/read,
// /v1/speak, /v2/speak), keeping the first error in reading order. Its
// rules are one set for every parameter:
//
//   - values are trimmed; a blank value is a parameter not given;
//   - a value of the wrong type (a boolean that is not true or false, a
//     number that is not one, NaN or infinite, a count such as
//     sample_rate or channels that is not a whole number of at least
//     one) is INVALID_QUERY_PARAMETER;
//   - the options take zero as unset, so a zero given explicitly is
//     refused where it was given, never quietly taken as the default: a
//     count's as above, a number's (speed, eot_threshold) as out of
//     range (BAD_REQUEST), as the options' Validate refuses one of the
//     right type outside its range;
//   - a repeated parameter (custom_topic, keyterm, redact, ...) keeps its
//     non-blank values, trimmed, in order.
//
// A queryReader is used by one goroutine, for one query.
type queryReader struct {
	q   url.Values
	err error
}

// fail keeps err when it is the first error.
func (r *queryReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// str returns the first value of k, trimmed.
func (r *queryReader) str(k string) string { return strings.TrimSpace(r.q.Get(k)) }

// lower returns the first value of k, trimmed and in lower case: for
// enumerations (encoding, container, priority, modes), which the service
// reads in any case.
func (r *queryReader) lower(k string) string { return strings.ToLower(r.str(k)) }

// upper returns the first value of k, trimmed and in upper case: for
// HTTP methods.
func (r *queryReader) upper(k string) string { return strings.ToUpper(r.str(k)) }

// boolean reads true or false, in any case; blank is false.
func (r *queryReader) boolean(k string) bool {
	switch r.lower(k) {
	case "", "false":
		return false
	case "true":
		return true
	}
	r.fail(queryError(k, "%s must be true or false, not %q", k, r.q.Get(k)))
	return false
}

// integer reads a whole number, which may be zero or negative; set
// reports whether one was given.
func (r *queryReader) integer(k string) (n int, set bool) {
	v := r.str(k)
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.fail(queryError(k, "%s must be a whole number, not %q", k, v))
		return 0, false
	}
	return n, true
}

// positive reads a count: a whole number of at least one; 0 when none is
// given.
func (r *queryReader) positive(k string) int {
	v := r.str(k)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		r.fail(queryError(k, "%s must be a positive whole number, not %q", k, v))
		return 0
	}
	return n
}

// finite reads a number that is neither NaN nor infinite; set reports
// whether one was given.
func (r *queryReader) finite(k string) (f float64, set bool) {
	v := r.str(k)
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		r.fail(queryError(k, "%s must be a number, not %q", k, v))
		return 0, false
	}
	return f, true
}

// number reads a number other than zero (which means unset); 0 when none
// is given. A negative number is left for the options' Validate, which
// names the range.
func (r *queryReader) number(k string) float64 {
	f, set := r.finite(k)
	if set && f == 0 {
		r.fail(badParam(k, fmt.Sprintf("%s %s is out of range", k, r.str(k))))
		return 0
	}
	return f
}

// list returns the non-blank values of a repeated parameter, trimmed, in
// order; nil when there are none.
func (r *queryReader) list(k string) []string { return nonEmpty(r.q[k]) }

// lowerList is list in lower case: for repeated enumerations (redact),
// where "false", the default, is no value.
func (r *queryReader) lowerList(k string) []string {
	var out []string
	for _, v := range r.list(k) {
		if v = strings.ToLower(v); v != "false" {
			out = append(out, v)
		}
	}
	return out
}

// summarize reads summarize: "" for a blank value or false, else the
// value in lower case ("true", "v2"), for Validate to check.
func (r *queryReader) summarize(k string) string {
	if s := r.lower(k); s != "false" {
		return s
	}
	return ""
}

// nonEmpty returns the trimmed values that are not blank.
func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// unknownParams returns the sorted names of q that known does not hold
// (names are case-sensitive); nil when there are none.
func unknownParams(q url.Values, known func(string) bool) []string {
	var unknown []string
	for k := range q {
		if !known(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return unknown
}

// queryError is the service's answer to a parameter it cannot read.
func queryError(param, format string, args ...any) *OptionError {
	return &OptionError{
		Param:  param,
		Reason: fmt.Sprintf(format, args...),
		Status: http.StatusBadRequest,
		Code:   CodeInvalidQueryParameter,
	}
}
