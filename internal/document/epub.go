package document

import (
	"context"
	"encoding/xml"
	"fmt"
	"strings"
)

// extractEPUB reads an e-book: META-INF/container.xml names the package
// document (OPF), whose spine orders the XHTML chapters, each read like a
// web page's body; the title is the package's dc:title.
func extractEPUB(ctx context.Context, name string, data []byte) (*Document, error) {
	z, err := openZip(name, EPUB, data)
	if err != nil {
		return nil, err
	}
	opfPath, err := epubRootfile(z)
	if err != nil {
		return nil, err
	}
	raw, err := z.readEntry(opfPath)
	if err != nil {
		return nil, err
	}
	var opf struct {
		Titles []string `xml:"metadata>title"`
		Items  []struct {
			ID         string `xml:"id,attr"`
			Href       string `xml:"href,attr"`
			MediaType  string `xml:"media-type,attr"`
			Properties string `xml:"properties,attr"`
		} `xml:"manifest>item"`
		Spine []struct {
			IDRef string `xml:"idref,attr"`
		} `xml:"spine>itemref"`
	}
	if err := xml.Unmarshal(raw, &opf); err != nil {
		return nil, corrupt(name, EPUB, fmt.Errorf("%s: %w", opfPath, err))
	}
	type item struct{ href, mediaType, props string }
	items := map[string]item{}
	for _, it := range opf.Items {
		items[it.ID] = item{href: it.Href, mediaType: it.MediaType, props: it.Properties}
	}
	var b builder
	seen := map[string]bool{}
	for _, ref := range opf.Spine {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it, ok := items[ref.IDRef]
		if !ok || it.href == "" {
			continue
		}
		if it.mediaType != "" && it.mediaType != "application/xhtml+xml" && it.mediaType != "text/html" {
			continue
		}
		if strings.Contains(" "+it.props+" ", " nav ") {
			// The table of contents repeats the chapters' titles.
			continue
		}
		entry := resolve(opfPath, it.href)
		if seen[entry] || !z.has(entry) {
			continue
		}
		seen[entry] = true
		chapter, err := z.readEntry(entry)
		if err != nil {
			return nil, err
		}
		ps, _, err := htmlBodyParagraphs(chapter)
		if err != nil {
			return nil, corrupt(name, EPUB, fmt.Errorf("%s: %w", entry, err))
		}
		b.paras = append(b.paras, ps...)
	}
	title := ""
	if len(opf.Titles) > 0 {
		title = opf.Titles[0]
	}
	return finish(name, EPUB, title, b.paras)
}

// epubRootfile returns the path of the package document.
func epubRootfile(z *zipDoc) (string, error) {
	raw, err := z.readEntry("META-INF/container.xml")
	if err != nil {
		return "", err
	}
	var c struct {
		Rootfiles []struct {
			Path      string `xml:"full-path,attr"`
			MediaType string `xml:"media-type,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := xml.Unmarshal(raw, &c); err != nil {
		return "", corrupt(z.name, EPUB, fmt.Errorf("META-INF/container.xml: %w", err))
	}
	for _, r := range c.Rootfiles {
		if r.Path != "" && (r.MediaType == "" || r.MediaType == "application/oebps-package+xml") {
			return resolve("", r.Path), nil
		}
	}
	return "", corrupt(z.name, EPUB, fmt.Errorf("META-INF/container.xml names no package document"))
}
