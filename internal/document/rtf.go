package document

import (
	"strconv"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// extractRTF reads Rich Text Format with a small parser of its own:
// groups, control words, \par and friends as paragraph ends, \'hh bytes in
// the document's code page (\ansicpg), \uN characters with \ucN fallback
// skipped, and the destinations that hold no body text (font and colour
// tables, style sheet, pictures, headers, fields' instructions, any
// \*-marked one) skipped. The title comes from \info's \title; paragraphs
// with an outline level (\outlinelevelN) or a heading style are headings.
// Footnotes and endnotes (\footnote) follow the text, numbered as cited.
func extractRTF(name string, data []byte) (*Document, error) {
	p := rtfParser{data: data, enc: charmap.Windows1252}
	p.run()
	return finish(name, RTF, p.title.String(), p.b.paras)
}

// rtfSkipped are destinations whose text is not the document's body.
var rtfSkipped = map[string]bool{
	"fonttbl": true, "colortbl": true, "stylesheet": true, "pict": true, "object": true,
	"header": true, "headerl": true, "headerr": true, "headerf": true,
	"footer": true, "footerl": true, "footerr": true, "footerf": true,
	"fldinst": true, "listtable": true, "listoverridetable": true, "revtbl": true,
	"rsidtbl": true, "generator": true, "xmlnstbl": true, "themedata": true,
	"colorschememapping": true, "latentstyles": true, "datastore": true, "mmathPr": true,
	"pgdsctbl": true, "filetbl": true, "bkmkstart": true, "bkmkend": true, "private": true,
	"operator": true, "author": true, "company": true, "subject": true, "keywords": true,
	"comment": true, "doccomm": true, "creatim": true, "revtim": true, "printim": true,
	"buptim": true, "xe": true, "tc": true, "txe": true, "atnid": true, "atnauthor": true,
	"annotation": true, "nonshppict": true, "shpinst": true, "sp": true,
	"userprops": true, "wgrffmtfilter": true, "pnseclvl": true, "pntext": true, "pntxtb": true,
	"pntxta": true, "listtext": true, "blipuid": true, "objdata": true, "template": true,
}

// rtfState is what a group sets; "{" saves it, "}" restores it.
type rtfState struct {
	skip     bool // inside a destination that is not body text
	title    bool // inside \info's \title
	style    bool // inside the style sheet (names are read, not shown)
	uc       int  // bytes to skip after \uN
	outline  bool // paragraph has an outline level
	styleRef int  // paragraph's \sN
}

type rtfParser struct {
	data    []byte
	i       int
	enc     encoding.Encoding
	st      rtfState
	stack   []rtfState
	b       builder
	cur     strings.Builder
	pending []byte // \'hh bytes waiting to be decoded together
	title   strings.Builder
	// headingStyles are the style numbers whose names are headings.
	headingStyles map[int]bool
	styleNum      int
	styleName     strings.Builder
	star          bool // the last control was \*
	highSurrogate rune
	// The notes: those cited so far, and those being read, each with the
	// group depth it closes at and the text of the paragraph that cites it.
	cited   notes
	inNotes []rtfNote
}

// rtfNote is a footnote or endnote being read.
type rtfNote struct {
	b      builder
	depth  int
	citing string
}

// maxRTFDepth bounds nesting; deeper groups are read as one level.
const maxRTFDepth = 1000

func (p *rtfParser) run() {
	p.st.uc = 1
	p.st.styleRef = -1
	p.headingStyles = map[int]bool{}
	p.styleNum = -1
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch c {
		case '{':
			p.i++
			if len(p.stack) < maxRTFDepth {
				p.stack = append(p.stack, p.st)
			}
			p.star = false
		case '}':
			p.i++
			p.flushBytes()
			if n := len(p.inNotes); n > 0 && p.inNotes[n-1].depth == len(p.stack) {
				p.endNote()
			}
			if p.st.style && len(p.stack) > 0 && !p.stack[len(p.stack)-1].style {
				p.endStyle()
			}
			if len(p.stack) > 0 {
				p.st = p.stack[len(p.stack)-1]
				p.stack = p.stack[:len(p.stack)-1]
			}
			p.star = false
		case '\\':
			p.control()
		case '\r', '\n':
			p.i++
		default:
			p.i++
			p.star = false
			p.char(rune(c), true)
		}
	}
	p.flushBytes()
	for len(p.inNotes) > 0 {
		p.endNote()
	}
	p.endParagraph()
	p.cited.appendTo(&p.b)
}

// startNote begins a footnote or endnote: its paragraphs are its own, and
// the paragraph that cites it waits for its end.
func (p *rtfParser) startNote() {
	p.inNotes = append(p.inNotes, rtfNote{depth: len(p.stack), citing: p.cur.String()})
	p.cur.Reset()
}

// endNote ends the note being read and cites it in the paragraph that
// holds it.
func (p *rtfParser) endNote() {
	p.endParagraph()
	n := p.inNotes[len(p.inNotes)-1]
	p.inNotes = p.inNotes[:len(p.inNotes)-1]
	p.cur.Reset()
	p.cur.WriteString(n.citing)
	p.cur.WriteString(p.cited.cite(n.b.paras))
}

// control reads a control word or symbol at p.i (a backslash).
func (p *rtfParser) control() {
	p.i++
	if p.i >= len(p.data) {
		return
	}
	c := p.data[p.i]
	if !isASCIILetter(c) {
		p.i++
		switch c {
		case '\'':
			if p.i+1 < len(p.data) && isHex(p.data[p.i]) && isHex(p.data[p.i+1]) {
				p.byteChar(unhex(p.data[p.i])<<4 | unhex(p.data[p.i+1]))
				p.i += 2
			}
		case '*':
			p.star = true
			return
		case '~':
			p.char('\u00a0', false)
		case '_':
			p.char('-', false)
		case '-':
			// optional hyphen: not shown unless the line breaks there
		case '\\', '{', '}':
			p.char(rune(c), false)
		case '\n', '\r':
			p.paragraph()
		case '\t':
			p.char(' ', false)
		}
		p.star = false
		return
	}
	start := p.i
	for p.i < len(p.data) && isASCIILetter(p.data[p.i]) && p.i-start < 32 {
		p.i++
	}
	word := string(p.data[start:p.i])
	param, hasParam := 0, false
	if p.i < len(p.data) && (p.data[p.i] == '-' || isDigit(p.data[p.i])) {
		ps := p.i
		p.i++
		for p.i < len(p.data) && isDigit(p.data[p.i]) && p.i-ps < 11 {
			p.i++
		}
		if n, err := strconv.Atoi(string(p.data[ps:p.i])); err == nil {
			param, hasParam = n, true
		}
	}
	if p.i < len(p.data) && p.data[p.i] == ' ' {
		p.i++
	}
	star := p.star
	p.star = false
	p.word(word, param, hasParam, star)
}

func (p *rtfParser) word(w string, param int, hasParam, star bool) {
	if w != "u" && w != "bin" {
		p.flushBytes()
	}
	if w == "footnote" && !p.st.skip && !p.st.style && !p.st.title {
		p.startNote()
		return
	}
	if rtfSkipped[w] || star {
		if w == "title" {
			p.st.title = true
			return
		}
		if w == "stylesheet" {
			p.st.style = true
			p.st.skip = true
			return
		}
		p.st.skip = true
		return
	}
	switch w {
	case "info":
		p.st.skip = true
	case "title":
		p.st.title = true
	case "ansicpg":
		if hasParam {
			if e := codePage(param); e != nil {
				p.enc = e
			}
		}
	case "mac":
		p.enc = charmap.Macintosh
	case "pc":
		p.enc = charmap.CodePage437
	case "pca":
		p.enc = charmap.CodePage850
	case "uc":
		if hasParam && param >= 0 && param < 10 {
			p.st.uc = param
		}
	case "u":
		if !hasParam {
			return
		}
		if param < 0 {
			param += 65536
		}
		p.unicode(rune(param))
		p.skipFallback()
	case "par", "sect", "page", "cell", "row", "column":
		p.paragraph()
	case "line", "tab", "emspace", "enspace", "qmspace":
		p.char(' ', false)
	case "emdash":
		p.char('—', false)
	case "endash":
		p.char('–', false)
	case "lquote":
		p.char('‘', false)
	case "rquote":
		p.char('’', false)
	case "ldblquote":
		p.char('“', false)
	case "rdblquote":
		p.char('”', false)
	case "bullet":
		p.char('•', false)
	case "pard":
		p.st.outline = false
		p.st.styleRef = -1
	case "outlinelevel":
		p.st.outline = hasParam && param >= 0 && param < 9
	case "s":
		if p.st.style {
			p.styleNum = param
		} else {
			p.st.styleRef = param
		}
	case "cs", "ds", "ts", "tsrowd":
		if p.st.style {
			p.styleNum = -1
		}
	case "bin":
		if hasParam && param > 0 {
			p.i += param
			if p.i > len(p.data) {
				p.i = len(p.data)
			}
		}
	}
}

// skipFallback skips the \ucN characters that follow \uN for readers
// without Unicode: plain bytes, \'hh, or whole control words.
func (p *rtfParser) skipFallback() {
	for n := p.st.uc; n > 0 && p.i < len(p.data); n-- {
		c := p.data[p.i]
		switch c {
		case '{', '}':
			return
		case '\\':
			if p.i+1 < len(p.data) && p.data[p.i+1] == '\'' {
				p.i += 4
			} else if p.i+1 < len(p.data) && isASCIILetter(p.data[p.i+1]) {
				// a control word counts as one character
				j := p.i + 1
				for j < len(p.data) && isASCIILetter(p.data[j]) {
					j++
				}
				for j < len(p.data) && (p.data[j] == '-' || isDigit(p.data[j])) {
					j++
				}
				if j < len(p.data) && p.data[j] == ' ' {
					j++
				}
				p.i = j
			} else {
				p.i += 2
			}
		case '\r', '\n':
			p.i++
			n++
		default:
			p.i++
		}
	}
	if p.i > len(p.data) {
		p.i = len(p.data)
	}
}

// unicode writes a \uN character, pairing UTF-16 surrogates.
func (p *rtfParser) unicode(r rune) {
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		p.highSurrogate = r
		return
	case utf16.IsSurrogate(r):
		if p.highSurrogate != 0 {
			r = utf16.DecodeRune(p.highSurrogate, r)
		} else {
			r = '\ufffd'
		}
	}
	p.highSurrogate = 0
	p.char(r, false)
}

// byteChar collects a \'hh byte; runs of them are decoded together, since
// the Asian code pages take two bytes per character.
func (p *rtfParser) byteChar(c byte) {
	p.pending = append(p.pending, c)
}

func (p *rtfParser) flushBytes() {
	if len(p.pending) == 0 {
		return
	}
	out, err := p.enc.NewDecoder().Bytes(p.pending)
	p.pending = p.pending[:0]
	if err != nil {
		return
	}
	p.text(string(out))
}

// char writes one character of text; raw is a character of the file
// itself (not an escape), which is in the document's code page.
func (p *rtfParser) char(r rune, raw bool) {
	p.flushBytes()
	if raw && r >= 0x80 {
		p.byteChar(byte(r))
		return
	}
	p.text(string(r))
}

// text adds decoded text where the group sends it.
func (p *rtfParser) text(s string) {
	switch {
	case p.st.title:
		p.title.WriteString(s)
	case p.st.style:
		p.styleName.WriteString(s)
		if strings.Contains(s, ";") {
			p.endStyle()
		}
	case p.st.skip:
	default:
		p.cur.WriteString(s)
	}
}

// endStyle records a style sheet entry's name, which ends with ";".
func (p *rtfParser) endStyle() {
	name := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.styleName.String()), ";")))
	if p.styleNum >= 0 && !strings.HasSuffix(name, " char") &&
		(strings.HasPrefix(name, "heading") || name == "title" || name == "subtitle") {
		p.headingStyles[p.styleNum] = true
	}
	p.styleName.Reset()
	p.styleNum = -1
}

// paragraph ends the current paragraph where the group sends text.
func (p *rtfParser) paragraph() {
	p.flushBytes()
	switch {
	case p.st.title:
		p.title.WriteByte(' ')
	case p.st.skip, p.st.style:
	default:
		p.endParagraph()
	}
}

func (p *rtfParser) endParagraph() {
	if n := len(p.inNotes); n > 0 {
		p.inNotes[n-1].b.add(p.cur.String(), false, 0)
	} else {
		heading := p.st.outline || (p.st.styleRef >= 0 && p.headingStyles[p.st.styleRef])
		p.b.add(p.cur.String(), heading, 0)
	}
	p.cur.Reset()
}

// codePage returns the encoding of a Windows code page number.
func codePage(n int) encoding.Encoding {
	switch n {
	case 437:
		return charmap.CodePage437
	case 850:
		return charmap.CodePage850
	case 852:
		return charmap.CodePage852
	case 866:
		return charmap.CodePage866
	case 874:
		return charmap.Windows874
	case 932:
		return japanese.ShiftJIS
	case 936:
		return simplifiedchinese.GBK
	case 949:
		return korean.EUCKR
	case 950:
		return traditionalchinese.Big5
	case 1250:
		return charmap.Windows1250
	case 1251:
		return charmap.Windows1251
	case 1252:
		return charmap.Windows1252
	case 1253:
		return charmap.Windows1253
	case 1254:
		return charmap.Windows1254
	case 1255:
		return charmap.Windows1255
	case 1256:
		return charmap.Windows1256
	case 1257:
		return charmap.Windows1257
	case 1258:
		return charmap.Windows1258
	case 10000:
		return charmap.Macintosh
	case 28591:
		return charmap.ISO8859_1
	case 28592:
		return charmap.ISO8859_2
	case 28605:
		return charmap.ISO8859_15
	}
	return nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
