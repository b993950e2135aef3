package document

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// extractDOCX reads a Word document (Office Open XML): the paragraphs of
// its main part in order, tables cell by cell and text boxes included,
// deleted tracked changes and field codes left out; paragraphs whose style
// is a heading or title style are headings. Footnotes and endnotes follow
// the text, numbered as cited.
func extractDOCX(ctx context.Context, name string, data []byte) (*Document, error) {
	z, err := openZip(name, DOCX, data)
	if err != nil {
		return nil, err
	}
	main := docxMainPart(z)
	body, err := z.readEntry(main)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	styles := docxStyles(z, main)
	footnotes := docxNotes(z, resolve(main, "footnotes.xml"), styles)
	endnotes := docxNotes(z, resolve(main, "endnotes.xml"), styles)
	var cited notes
	cite := func(kind, id string) string {
		if kind == "endnoteReference" {
			return cited.cite(endnotes[id])
		}
		return cited.cite(footnotes[id])
	}
	paras, titleStyle, err := docxParagraphs(body, styles, cite)
	if err != nil {
		return nil, corrupt(name, DOCX, err)
	}
	b := builder{paras: paras}
	cited.appendTo(&b)
	paras = b.paras
	title := coreTitle(z, "docProps/core.xml")
	if title == "" {
		title = titleStyle
	}
	return finish(name, DOCX, title, paras)
}

// docxMainPart finds the document's main part through the package's
// relationships; word/document.xml when they do not say.
func docxMainPart(z *zipDoc) string {
	const fallback = "word/document.xml"
	if !z.has("_rels/.rels") {
		return fallback
	}
	data, err := z.readEntry("_rels/.rels")
	if err != nil {
		return fallback
	}
	var rels struct {
		Rel []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if xml.Unmarshal(data, &rels) != nil {
		return fallback
	}
	for _, r := range rels.Rel {
		if strings.HasSuffix(r.Type, "/officeDocument") && r.Target != "" {
			if t := resolve("", r.Target); z.has(t) {
				return t
			}
		}
	}
	return fallback
}

// docxStyle is what a paragraph style says about headings.
type docxStyle struct {
	heading bool
	title   bool
}

// docxStyles maps style ids to whether they are headings: by their name
// ("heading 1", "Title"), or an outline level, their own or inherited.
func docxStyles(z *zipDoc, main string) map[string]docxStyle {
	out := map[string]docxStyle{}
	part := resolve(main, "styles.xml")
	if !z.has(part) {
		return out
	}
	data, err := z.readEntry(part)
	if err != nil {
		return out
	}
	var doc struct {
		Styles []struct {
			Type    string  `xml:"type,attr"`
			ID      string  `xml:"styleId,attr"`
			Name    valAttr `xml:"name"`
			BasedOn valAttr `xml:"basedOn"`
			PPr     struct {
				Outline *valAttr `xml:"outlineLvl"`
			} `xml:"pPr"`
		} `xml:"style"`
	}
	if xml.Unmarshal(data, &doc) != nil {
		return out
	}
	type raw struct {
		name, based string
		outline     int
	}
	byID := map[string]raw{}
	for _, s := range doc.Styles {
		if s.Type != "" && s.Type != "paragraph" {
			continue
		}
		r := raw{name: strings.ToLower(s.Name.Val), based: s.BasedOn.Val, outline: -1}
		if s.PPr.Outline != nil {
			if n, err := strconv.Atoi(s.PPr.Outline.Val); err == nil {
				r.outline = n
			}
		}
		byID[s.ID] = r
	}
	for id := range byID {
		var st docxStyle
		cur := id
		for depth := 0; depth < 16; depth++ {
			r, ok := byID[cur]
			if !ok {
				break
			}
			if r.name == "title" {
				st.title, st.heading = true, true
				break
			}
			if strings.HasPrefix(r.name, "heading") || r.name == "subtitle" || (r.outline >= 0 && r.outline < 9) {
				st.heading = true
				break
			}
			cur = r.based
		}
		out[id] = st
	}
	return out
}

type valAttr struct {
	Val string `xml:"val,attr"`
}

// docxPara is a paragraph being read; text boxes nest them.
type docxPara struct {
	text    strings.Builder
	style   string
	outline bool
}

// docxNotes reads a part of footnotes or endnotes: each note's paragraphs
// by its id. The separators Word keeps there are no notes.
func docxNotes(z *zipDoc, part string, styles map[string]docxStyle) map[string][]Paragraph {
	if !z.has(part) {
		return nil
	}
	data, err := z.readEntry(part)
	if err != nil {
		return nil
	}
	out := map[string][]Paragraph{}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		start := d.InputOffset()
		tok, err := d.RawToken()
		if err != nil {
			return out
		}
		t, ok := tok.(xml.StartElement)
		if !ok || t.Name.Space != "w" || (t.Name.Local != "footnote" && t.Name.Local != "endnote") {
			continue
		}
		// The note's element, read to its end.
		for depth := 1; depth > 0; {
			tok, err := d.RawToken()
			if err != nil {
				return out
			}
			switch tok.(type) {
			case xml.StartElement:
				depth++
			case xml.EndElement:
				depth--
			}
		}
		if kind := xmlAttr(t, "type"); kind != "" && kind != "normal" {
			continue
		}
		if paras, _, err := docxParagraphs(data[start:d.InputOffset()], styles, nil); err == nil {
			for i := range paras {
				paras[i].Heading = false
			}
			out[xmlAttr(t, "id")] = paras
		}
	}
}

// docxParagraphs reads the paragraphs of a WordprocessingML part, and the
// first paragraph in the Title style. cite, when not nil, is given each
// footnote or endnote reference (its element's name and the note's id)
// and returns the mark to put in the text.
func docxParagraphs(data []byte, styles map[string]docxStyle, cite func(kind, id string) string) ([]Paragraph, string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var b builder
	var stack []*docxPara
	title := ""
	inText := false
	skip := 0 // depth inside an element whose text is not read
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skip > 0 {
				skip++
				continue
			}
			local := t.Name.Local
			switch {
			case t.Name.Space == "mc" && local == "Fallback":
				// The same content again, for older readers.
				skip = 1
			case local == "p" && (t.Name.Space == "w" || t.Name.Space == ""):
				stack = append(stack, &docxPara{})
			case local == "t" && (t.Name.Space == "w" || t.Name.Space == "m" || t.Name.Space == ""):
				inText = true
			case len(stack) == 0:
			case local == "pStyle" && t.Name.Space == "w":
				stack[len(stack)-1].style = xmlAttr(t, "val")
			case local == "outlineLvl" && t.Name.Space == "w":
				if n, err := strconv.Atoi(xmlAttr(t, "val")); err == nil && n < 9 {
					stack[len(stack)-1].outline = true
				}
			case local == "tab" || local == "br" || local == "cr":
				if t.Name.Space == "w" {
					stack[len(stack)-1].text.WriteByte(' ')
				}
			case local == "noBreakHyphen" && t.Name.Space == "w":
				stack[len(stack)-1].text.WriteByte('-')
			case local == "sym" && t.Name.Space == "w":
				stack[len(stack)-1].text.WriteString(docxSym(xmlAttr(t, "char")))
			case (local == "footnoteReference" || local == "endnoteReference") && t.Name.Space == "w" && cite != nil:
				stack[len(stack)-1].text.WriteString(cite(local, xmlAttr(t, "id")))
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				continue
			}
			switch {
			case t.Name.Local == "t":
				inText = false
			case t.Name.Local == "p" && (t.Name.Space == "w" || t.Name.Space == "") && len(stack) > 0:
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				st := styles[p.style]
				heading := st.heading || p.outline || isHeadingStyleID(p.style)
				if (st.title || strings.EqualFold(p.style, "Title")) && title == "" {
					title = clean(p.text.String())
				}
				b.add(p.text.String(), heading, 0)
			}
		case xml.CharData:
			if skip == 0 && inText && len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	return b.paras, title, nil
}

// isHeadingStyleID catches the built-in heading styles when the styles
// part is missing: "Heading1", "Title".
func isHeadingStyleID(id string) bool {
	low := strings.ToLower(id)
	return low == "title" || low == "subtitle" || strings.HasPrefix(low, "heading")
}

// docxSym turns a w:sym character code (hex, often in the private-use
// area of a symbol font) into text; symbols of fonts cannot be mapped and
// become nothing.
func docxSym(code string) string {
	n, err := strconv.ParseUint(code, 16, 32)
	if err != nil || n < 0x20 || (n >= 0xe000 && n <= 0xf8ff) {
		return ""
	}
	return string(rune(n))
}

// xmlAttr returns an attribute's value by local name.
func xmlAttr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// coreTitle reads dc:title from a metadata part (DOCX core properties,
// ODT meta.xml).
func coreTitle(z *zipDoc, part string) string {
	if !z.has(part) {
		return ""
	}
	data, err := z.readEntry(part)
	if err != nil {
		return ""
	}
	return xmlTitle(data)
}

// xmlTitle returns the text of the first dc:title element.
func xmlTitle(data []byte) string {
	d := xml.NewDecoder(bytes.NewReader(data))
	in := false
	var b strings.Builder
	for {
		tok, err := d.RawToken()
		if err != nil {
			return ""
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "title" && t.Name.Space == "dc" {
				in = true
			}
		case xml.EndElement:
			if in && t.Name.Local == "title" && t.Name.Space == "dc" {
				return clean(b.String())
			}
		case xml.CharData:
			if in {
				b.Write(t)
			}
		}
	}
}
