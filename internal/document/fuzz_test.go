package document

import (
	"context"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkDoc holds what every extracted document promises, whatever the
// input: clean one-line paragraphs, and offsets that map without panic.
func checkDoc(t *testing.T, doc *Document, err error) {
	t.Helper()
	if err != nil {
		if doc != nil {
			t.Fatalf("both a document and an error: %v", err)
		}
		if err.Error() == "" {
			t.Fatal("an error without words")
		}
		return
	}
	if doc == nil || len(doc.Paragraphs) == 0 {
		t.Fatal("no error and no paragraphs")
	}
	for _, p := range doc.Paragraphs {
		if p.Text == "" || strings.ContainsAny(p.Text, "\n\r\t") || !utf8.ValidString(p.Text) ||
			strings.Contains(p.Text, "  ") || strings.TrimSpace(p.Text) != p.Text {
			t.Fatalf("paragraph not one clean line: %q", p.Text)
		}
	}
	text := doc.Text()
	for _, off := range []int{-1, 0, len(text) / 2, len(text) - 1, len(text), len(text) + 1} {
		doc.PageAt(off)
	}
}

// seedFiles adds documents made by real tools to a fuzz corpus.
func seedFiles(f *testing.F, kinds ...string) {
	for _, k := range kinds {
		data, err := os.ReadFile(makeDoc(f, k))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(k, data)
	}
}

// FuzzExtract feeds anything to Extract, named with every extension it
// knows. PDF goes to an external program and is left to FuzzPDFLayout.
func FuzzExtract(f *testing.F) {
	seedFiles(f, "docx", "odt", "epub", "rtf", "html", "md", "txt", "utf16le.txt", "cp1252.txt")
	f.Add("x.rtf", []byte(`{\rtf1\ansi\ansicpg932{\*\x}\u-10179?\'93\'fa{\stylesheet{\s1 heading 1;}}\s1 a\par}`))
	f.Add("x.rtf", []byte(`{\rtf1 a{\super\chftn}{\*\footnote\chftn \pard b\par {\footnote c}}d\par}`))
	f.Add("x.html", []byte(`<main><h1>t</h1><p>a<br><br>b</p><pre>c

d</pre></main>`))
	f.Add("x.md", []byte("---\ntitle: t\n---\n# h\n\n- a\n```\nb\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if f, err := Detect(name, data); err == nil && f == PDF {
			t.Skip()
		}
		doc, err := Extract(context.Background(), name, data)
		checkDoc(t, doc, err)
	})
}

// FuzzOfficeXML feeds the XML readers of DOCX and ODT directly, past the
// zip layer whose checksums a fuzzer rarely gets right.
func FuzzOfficeXML(f *testing.F) {
	f.Add(`<w:document><w:body><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>a</w:t><w:tab/><w:sym w:char="F04A"/></w:r></w:p></w:body></w:document>`)
	f.Add(`<office:body><office:text><text:h>h</text:h><text:p>a<text:s text:c="99999999"/>b<text:note><text:note-body><text:p>n</text:p></text:note-body></text:note></text:p></office:text></office:body>`)
	f.Add(`<w:p><mc:Fallback><w:p><w:t>x</w:t></w:p></mc:Fallback><w:t>y</w:t></w:p>`)
	f.Fuzz(func(t *testing.T, s string) {
		ps, _, err := docxParagraphs([]byte(s), map[string]docxStyle{"Heading1": {heading: true}}, func(kind, id string) string { return "[" + id + "]" })
		if err == nil {
			doc, err := finish("x.docx", DOCX, "", ps)
			checkDoc(t, doc, err)
		}
		ps, _, err = odtParagraphs([]byte(s), map[string]string{"P1": "Title"})
		if err == nil {
			doc, err := finish("x.odt", ODT, "", ps)
			checkDoc(t, doc, err)
		}
	})
}

// FuzzPDFLayout feeds the reader of pdftotext's layout output and the
// paragraph rebuilding.
func FuzzPDFLayout(f *testing.F) {
	f.Add(`<doc><page width="595" height="842"><flow><block><line xMin="72" yMin="100" xMax="500" yMax="110"><word>Hello-</word></line><line xMin="72" yMin="112" xMax="300" yMax="122"><word>world</word><word>again.</word></line></block></flow></page>
<page><flow><block><line xMin="90" yMin="100" xMax="200" yMax="140"><word>Big</word></line></block><block><line xMin="72" yMin="800" xMax="80" yMax="810"><word>2</word></line></block></flow></page></doc>`)
	f.Add(`<page><block><line xMin="NaN" yMin="-1e308" xMax="+Inf" yMax="1e308"><word>&amp;&nbsp;</word></line></block></page>`)
	f.Fuzz(func(t *testing.T, s string) {
		pages, err := parseBBox(strings.NewReader(s))
		if err != nil {
			return
		}
		doc, err := finish("x.pdf", PDF, "", pdfParagraphs(pages))
		checkDoc(t, doc, err)
	})
}

// FuzzMarkup feeds the HTML, RTF and text readers directly with small
// inputs, where the fuzzer moves fastest.
func FuzzMarkup(f *testing.F) {
	f.Add(`<html><body><header><h1>T</h1></header><div class="sidebar content"><p>a <a>b</a></p></div><article><p>x</p></article><pre>a

b</pre><br><br></body></html>`)
	f.Add(`{\rtf1\ansi\ansicpg1251{\fonttbl{\f0 T;}}{\stylesheet{\s1 heading 1;}}{\info{\title t}}\s1 H\par\pard \'e0\u1087?\uc2\u8212\'97\'97{\*\x y}\bin2 ab\cell\par}`)
	f.Add("---\ntitle: x\n---\n# a\n\nb\nc\n\n- d\n```\ne\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"x.html", "x.rtf", "x.md", "x.txt"} {
			if f, err := Detect(name, []byte(s)); err == nil && f == PDF {
				continue
			}
			doc, err := Extract(context.Background(), name, []byte(s))
			checkDoc(t, doc, err)
		}
		ps, _, err := htmlBodyParagraphs([]byte(s))
		if err == nil && len(ps) > 0 {
			doc, err := finish("x.xhtml", EPUB, "", ps)
			checkDoc(t, doc, err)
		}
		doc, err := extractRTF("x.rtf", []byte(s))
		checkDoc(t, doc, err)
	})
}

// FuzzDecodeText: any bytes decode to valid UTF-8 under a name, and the
// guess is stable: decoding again what came out gives the same text.
func FuzzDecodeText(f *testing.F) {
	for _, text := range legacyTexts {
		f.Add([]byte(text))
	}
	f.Add([]byte("caf\xe9 \x93x\x94 \xcf\xf0\xe8\xe2\xe5\xf2 \x82\xb1\x82\xf1"))
	f.Add([]byte{0xff, 0xfe, 'a', 0, 0xd8})
	f.Fuzz(func(t *testing.T, data []byte) {
		text, name := decodeText(data)
		if name == "" || !utf8.ValidString(text) {
			t.Fatalf("decoded as %q to %q", name, text)
		}
		if name != "utf-8" && !strings.HasPrefix(text, "\ufeff") {
			if again, _ := decodeText([]byte(text)); again != text {
				t.Fatalf("decoding the output again changed it: %q then %q", text, again)
			}
		}
	})
}
