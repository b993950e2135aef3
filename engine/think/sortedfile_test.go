package think

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestLineFileSearch(t *testing.T) {
	var b strings.Builder
	b.WriteString("  1 a header line, before every key\n  2 another\n")
	keys := []string{"a", "apple", "b", "b", "b", "banana", "c", "cherry", "d"}
	for i, k := range keys {
		fmt.Fprintf(&b, "%s %d%s\n", k, i, strings.Repeat(".", i*37)) // lines of many lengths
	}
	text := strings.TrimSuffix(b.String(), "\n") // no newline at the end
	f := lineFile{r: strings.NewReader(text), size: int64(len(text))}
	for _, tt := range []struct {
		key  string
		want int
	}{{"a", 1}, {"apple", 1}, {"b", 3}, {"banana", 1}, {"d", 1}, {"0", 0}, {"bb", 0}, {"zzz", 0}, {"", 2}} {
		lines, err := f.search([]byte(tt.key), keyBefore(' '), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != tt.want {
			t.Errorf("search(%q) found %d lines, want %d: %q", tt.key, len(lines), tt.want, lines)
		}
		for _, l := range lines {
			if !bytes.HasPrefix(l, []byte(tt.key+" ")) {
				t.Errorf("search(%q) found %q", tt.key, l)
			}
		}
	}
	if lines, _ := f.search([]byte("b"), keyBefore(' '), 2); len(lines) != 2 {
		t.Errorf("limit 2 gave %d lines", len(lines))
	}
	long := strings.Repeat("x", maxLine+10)
	lf := lineFile{r: strings.NewReader(long), size: int64(len(long))}
	if _, err := lf.search([]byte("x"), keyBefore(' '), 1); err == nil {
		t.Error("a line longer than maxLine gave no error")
	}
}

func FuzzLineFileSearch(f *testing.F) {
	f.Add("a 1\nb 2\nc 3\n", "b")
	f.Add("c\nb\na\n\n\n", "a")
	f.Add("\n\n\n", "")
	f.Add("zzz", "zzz")
	f.Fuzz(func(t *testing.T, text, key string) {
		lf := lineFile{r: strings.NewReader(text), size: int64(len(text))}
		lines, err := lf.search([]byte(key), keyBefore(' '), 5)
		if err != nil {
			return
		}
		for _, l := range lines {
			if string(keyBefore(' ')(l)) != key {
				t.Fatalf("search(%q) found %q", key, l)
			}
		}
		// A sorted file finds every line of the key.
		sorted := strings.Split(text, "\n")
		want := 0
		for _, l := range sorted {
			if string(keyBefore(' ')([]byte(l))) == key && !strings.Contains(l, "\n") {
				want++
			}
		}
		if isSorted(sorted) && text != "" && !strings.HasSuffix(text, "\n") && want <= 5 && len(lines) != want {
			t.Fatalf("sorted %q: search(%q) found %d lines, want %d", text, key, len(lines), want)
		}
	})
}

func isSorted(lines []string) bool {
	for i := 1; i < len(lines); i++ {
		if string(keyBefore(' ')([]byte(lines[i-1]))) > string(keyBefore(' ')([]byte(lines[i]))) {
			return false
		}
	}
	return true
}
