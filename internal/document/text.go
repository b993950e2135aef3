package document

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
)

// utf16Order tells UTF-16 text: 1 little-endian, 2 big-endian, 0 neither.
// A byte-order mark decides; without one, text whose every other byte is
// mostly NUL is taken for UTF-16 of a Latin script.
func utf16Order(data []byte) int {
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		return 1
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		return 2
	}
	n := len(data)
	if n > 4096 {
		n = 4096
	}
	n &^= 1
	if n < 4 {
		return 0
	}
	even, odd := 0, 0
	for i := 0; i < n; i += 2 {
		if data[i] == 0 {
			even++
		}
		if data[i+1] == 0 {
			odd++
		}
	}
	pairs := n / 2
	switch {
	case odd*10 >= pairs*7 && even*10 < pairs:
		return 1
	case even*10 >= pairs*7 && odd*10 < pairs:
		return 2
	}
	return 0
}

// decodeText turns bytes of text into UTF-8: UTF-8 with or without a
// byte-order mark, UTF-16 either way round, and otherwise the legacy
// encoding guessLegacy finds: Windows-1252 (a superset of the printable
// Latin-1), a Cyrillic one, or a Japanese, Chinese or Korean one. It
// names the encoding it chose.
func decodeText(data []byte) (string, string) {
	if bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}) {
		return string(bytes.ToValidUTF8(data[3:], []byte("\ufffd"))), "utf-8"
	}
	switch utf16Order(data) {
	case 1:
		return decodeUTF16(data, unicode.LittleEndian), "utf-16le"
	case 2:
		return decodeUTF16(data, unicode.BigEndian), "utf-16be"
	}
	if utf8.Valid(data) {
		return string(data), "utf-8"
	}
	// Cut at most a few bytes of a rune split at the end of a sample.
	if trimmed := trimPartialRune(data); utf8.Valid(trimmed) {
		return string(trimmed), "utf-8"
	}
	c := guessLegacy(data)
	out, err := c.enc.NewDecoder().Bytes(data)
	if err != nil {
		return string(bytes.ToValidUTF8(data, []byte("\ufffd"))), "utf-8"
	}
	return string(out), c.name
}

// decodeUTF16 decodes UTF-16, dropping a byte-order mark.
func decodeUTF16(data []byte, order unicode.Endianness) string {
	if len(data)%2 == 1 {
		data = data[:len(data)-1]
	}
	out, err := unicode.UTF16(order, unicode.UseBOM).NewDecoder().Bytes(data)
	if err != nil {
		return ""
	}
	return string(out)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of data.
func trimPartialRune(data []byte) []byte {
	for i := 1; i <= 3 && i <= len(data); i++ {
		c := data[len(data)-i]
		if c < 0x80 {
			return data
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			return data
		}
	}
	return data
}

// extractPlain reads plain text or markdown: paragraphs are separated by
// blank lines, a paragraph's lines are joined. In markdown, "#" lines are
// headings, and list items and fenced code start paragraphs of their own.
func extractPlain(name string, data []byte, markdown bool) (*Document, error) {
	text, _ := decodeText(data)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	f := Text
	title := ""
	if markdown {
		f = Markdown
		title, text = frontMatter(text)
	}
	var b builder
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			b.add(strings.Join(cur, " "), false, 0)
			cur = cur[:0]
		}
	}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if markdown {
			if fence != "" {
				if strings.HasPrefix(trim, fence) {
					fence = ""
					flush()
					continue
				}
				if trim == "" {
					flush()
				} else {
					cur = append(cur, trim)
				}
				continue
			}
			if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
				flush()
				fence = trim[:3]
				continue
			}
			if h, ok := markdownHeading(trim); ok {
				flush()
				b.add(h, true, 0)
				continue
			}
			if len(cur) > 0 && isSetextUnderline(trim) {
				h := strings.Join(cur, " ")
				cur = cur[:0]
				b.add(h, true, 0)
				continue
			}
			if isListItem(trim) {
				flush()
			}
		}
		if trim == "" {
			flush()
			continue
		}
		cur = append(cur, trim)
	}
	flush()
	return finish(name, f, title, b.paras)
}

// frontMatter cuts a YAML front matter block ("---" lines around
// "key: value" lines, as pandoc, Jekyll and Hugo read) from the start of
// markdown, and returns its title.
func frontMatter(text string) (title, rest string) {
	body, ok := strings.CutPrefix(strings.TrimPrefix(text, "\ufeff"), "---\n")
	if !ok {
		return "", text
	}
	lines := strings.SplitAfter(body, "\n")
	for i, l := range lines {
		if i > 200 {
			break
		}
		trim := strings.TrimSpace(l)
		if trim == "---" || trim == "..." {
			return title, strings.Join(lines[i+1:], "")
		}
		if v, ok := strings.CutPrefix(trim, "title:"); ok {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			title = v
		}
	}
	return "", text
}

// markdownHeading returns the text of an ATX heading ("## Title ##").
func markdownHeading(line string) (string, bool) {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return "", false
	}
	rest := line[n:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	trimmed := strings.TrimRight(rest, "#")
	if trimmed == "" || strings.HasSuffix(trimmed, " ") || strings.HasSuffix(trimmed, "\t") {
		rest = strings.TrimSpace(trimmed)
	}
	return rest, rest != ""
}

// isSetextUnderline is a line of "=" or "-" under a heading's text.
func isSetextUnderline(line string) bool {
	if len(line) < 2 {
		return false
	}
	c := line[0]
	if c != '=' && c != '-' {
		return false
	}
	return strings.Trim(line, string(c)) == ""
}

// isListItem is a markdown list item: "- x", "* x", "+ x", "1. x", "1) x".
func isListItem(line string) bool {
	if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && line[1] == ' ' {
		return true
	}
	i := 0
	for i < len(line) && i < 9 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' '
}
