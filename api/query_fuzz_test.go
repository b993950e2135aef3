package api

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzQueryReader holds every reader of the one query reader to its
// rules, whatever query it is given: no panic; an error is an
// *OptionError of status 400 naming the parameter, INVALID_QUERY_PARAMETER
// for a value of the wrong type and BAD_REQUEST for one out of range;
// values read are trimmed, typed and never the zero a parameter's absence
// means when one was given.
func FuzzQueryReader(f *testing.F) {
	for _, s := range []string{
		"k=true", "k=TRUE", "k=%20false%20", "k=", "k=yes", "k=1",
		"k=0", "k=-3", "k=16000", "k=1.5", "k=NaN", "k=-Inf", "k=1e400", "k=0x1p-2", "k=%2B7",
		"k=a&k=%20&k=%20b%20&k=False", "k=%ff", "other=1", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		v := strings.TrimSpace(q.Get("k"))
		read := func(name string, f func(r *queryReader)) error {
			r := queryReader{q: q}
			f(&r)
			if r.err == nil {
				return nil
			}
			var oe *OptionError
			if !errors.As(r.err, &oe) || oe.Status != 400 || oe.Param != "k" || oe.Reason == "" {
				t.Fatalf("%s: error %T %v", name, r.err, r.err)
			}
			if oe.Code != CodeInvalidQueryParameter && oe.Code != CodeBadRequest {
				t.Fatalf("%s: code %q", name, oe.Code)
			}
			return r.err
		}
		var b bool
		if err := read("boolean", func(r *queryReader) { b = r.boolean("k") }); err == nil {
			if want := strings.EqualFold(v, "true"); b != want || !(want || v == "" || strings.EqualFold(v, "false")) {
				t.Fatalf("boolean(%q) = %v", v, b)
			}
		}
		var n int
		if err := read("positive", func(r *queryReader) { n = r.positive("k") }); err == nil {
			if (v == "") != (n == 0) || n < 0 {
				t.Fatalf("positive(%q) = %d", v, n)
			}
		} else if m, perr := strconv.Atoi(v); perr == nil && m > 0 {
			t.Fatalf("positive(%q) refused: %v", v, err)
		}
		var x float64
		if err := read("number", func(r *queryReader) { x = r.number("k") }); err == nil {
			if (v == "") != (x == 0) || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("number(%q) = %v", v, x)
			}
		}
		var list []string
		_ = read("list", func(r *queryReader) { list = r.list("k") })
		blank := 0
		for _, s := range q["k"] {
			if strings.TrimSpace(s) == "" {
				blank++
			}
		}
		if len(list) != len(q["k"])-blank {
			t.Fatalf("list(%q) = %q", q["k"], list)
		}
		for _, s := range list {
			if s == "" || s != strings.TrimSpace(s) {
				t.Fatalf("list(%q) holds %q", q["k"], s)
			}
		}
		var lower []string
		_ = read("lowerList", func(r *queryReader) { lower = r.lowerList("k") })
		for _, s := range lower {
			if s == "false" || s != strings.ToLower(s) {
				t.Fatalf("lowerList(%q) holds %q", q["k"], s)
			}
		}
	})
}
