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

// extractODT reads an OpenDocument text: text:h are headings, text:p
// paragraphs (those in a title or heading style are headings too), lists,
// tables and frames included; footnotes and endnotes after the text,
// numbered as cited; annotations and tracked deletions left out.
func extractODT(ctx context.Context, name string, data []byte) (*Document, error) {
	if !bytes.HasPrefix(data, []byte("PK")) {
		return extractFlatODT(name, data)
	}
	z, err := openZip(name, ODT, data)
	if err != nil {
		return nil, err
	}
	content, err := z.readEntry("content.xml")
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parents := map[string]string{}
	if z.has("styles.xml") {
		if s, err := z.readEntry("styles.xml"); err == nil {
			odtStyleParents(s, parents)
		}
	}
	odtStyleParents(content, parents)
	paras, titleStyle, err := odtParagraphs(content, parents)
	if err != nil {
		return nil, corrupt(name, ODT, err)
	}
	title := coreTitle(z, "meta.xml")
	if title == "" {
		title = titleStyle
	}
	return finish(name, ODT, title, paras)
}

// extractFlatODT reads a flat OpenDocument text (.fodt): styles, meta
// and content in one XML file.
func extractFlatODT(name string, data []byte) (*Document, error) {
	parents := map[string]string{}
	odtStyleParents(data, parents)
	paras, titleStyle, err := odtParagraphs(data, parents)
	if err != nil {
		return nil, corrupt(name, ODT, err)
	}
	title := xmlTitle(data)
	if title == "" {
		title = titleStyle
	}
	return finish(name, ODT, title, paras)
}

// odtStyleParents records each style's parent style.
func odtStyleParents(data []byte, parents map[string]string) {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.RawToken()
		if err != nil {
			return
		}
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "style" && t.Name.Space == "style" {
			name := xmlAttr(t, "name")
			if p := xmlAttr(t, "parent-style-name"); name != "" && p != "" {
				parents[name] = p
			}
		}
	}
}

// odtStyleKind says whether a style, or one it derives from, is a title
// or heading style. Style names encode spaces as "_20_".
func odtStyleKind(style string, parents map[string]string) (heading, title bool) {
	for depth := 0; style != "" && depth < 16; depth++ {
		low := strings.ToLower(strings.ReplaceAll(style, "_20_", " "))
		switch {
		case low == "title":
			return true, true
		case low == "subtitle" || strings.HasPrefix(low, "heading"):
			return true, false
		}
		style = parents[style]
	}
	return false, false
}

type odtPara struct {
	text    strings.Builder
	heading bool
	title   bool
}

// odtParagraphs reads the paragraphs of content.xml's body.
func odtParagraphs(data []byte, parents map[string]string) ([]Paragraph, string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var b builder
	var stack []*odtPara
	var cited notes
	var inNotes []*builder // the bodies of the notes being read
	title := ""
	skip := 0
	inBody := false
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
			if t.Name.Space == "office" && t.Name.Local == "body" {
				inBody = true
				continue
			}
			if !inBody {
				continue
			}
			switch t.Name.Space + ":" + t.Name.Local {
			case "text:note-citation", "office:annotation", "text:tracked-changes", "text:sequence-decls",
				"text:variable-decls", "text:user-field-decls", "office:forms":
				skip = 1
			case "text:note-body":
				inNotes = append(inNotes, &builder{})
			case "text:h", "text:p":
				p := &odtPara{heading: t.Name.Local == "h"}
				h, ti := odtStyleKind(xmlAttr(t, "style-name"), parents)
				p.heading = p.heading || h
				p.title = ti
				stack = append(stack, p)
			case "text:s":
				if len(stack) > 0 {
					n, err := strconv.Atoi(xmlAttr(t, "c"))
					if err != nil || n < 1 {
						n = 1
					}
					if n > 1000 {
						n = 1000
					}
					stack[len(stack)-1].text.WriteString(strings.Repeat(" ", n))
				}
			case "text:tab", "text:line-break":
				if len(stack) > 0 {
					stack[len(stack)-1].text.WriteByte(' ')
				}
			}
		case xml.EndElement:
			if skip > 0 {
				skip--
				continue
			}
			if t.Name.Space == "text" && (t.Name.Local == "p" || t.Name.Local == "h") && len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if len(inNotes) > 0 {
					inNotes[len(inNotes)-1].add(p.text.String(), false, 0)
					continue
				}
				if p.title && title == "" {
					title = clean(p.text.String())
				}
				b.add(p.text.String(), p.heading, 0)
			}
			if t.Name.Space == "text" && t.Name.Local == "note-body" && len(inNotes) > 0 {
				note := inNotes[len(inNotes)-1]
				inNotes = inNotes[:len(inNotes)-1]
				mark := cited.cite(note.paras)
				if len(stack) > 0 {
					stack[len(stack)-1].text.WriteString(mark)
				}
			}
			if t.Name.Space == "office" && t.Name.Local == "body" {
				inBody = false
			}
		case xml.CharData:
			if skip == 0 && len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	cited.appendTo(&b)
	return b.paras, title, nil
}
