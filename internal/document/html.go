package document

import (
	"bytes"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// extractHTML reads a web page: its main text, without menus, headers,
// footers, forms and scripts. contentType is the server's Content-Type
// header ("" for a file), which may name the charset.
func extractHTML(name string, data []byte, contentType string) (*Document, error) {
	root, err := parseHTML(data, contentType)
	if err != nil {
		return nil, corrupt(name, HTML, err)
	}
	title := htmlTitle(root)
	body := findElement(root, atom.Body)
	if body == nil {
		return finish(name, HTML, title, nil)
	}
	prune(body, true)
	main := mainContent(body)
	var w htmlWalker
	if main != body {
		// A page's title heading often sits above its main text.
		if h := findElement(body, atom.H1); h != nil && !contains(main, h) && findElement(main, atom.H1) == nil {
			w.b.add(nodeText(h), true, 0)
		}
	}
	w.walk(main)
	w.flush()
	return finish(name, HTML, title, w.b.paras)
}

// htmlBodyParagraphs returns the paragraphs of a whole (X)HTML page's
// body, such as a chapter of an e-book, dropping only what is never text
// (scripts, styles, navigation).
func htmlBodyParagraphs(data []byte) ([]Paragraph, string, error) {
	root, err := parseHTML(data, "")
	if err != nil {
		return nil, "", err
	}
	body := findElement(root, atom.Body)
	if body == nil {
		return nil, htmlTitle(root), nil
	}
	prune(body, false)
	var w htmlWalker
	w.walk(body)
	w.flush()
	return w.b.paras, htmlTitle(root), nil
}

// parseHTML decodes data by its byte-order mark, the server's charset,
// a <meta> charset, or else as UTF-8 when valid and as decodeText guesses
// if not, and parses it.
func parseHTML(data []byte, contentType string) (*html.Node, error) {
	enc, name, certain := charset.DetermineEncoding(data, contentType)
	// Not certain: from a <meta>, or a guess from the first kilobyte that
	// gives Windows-1252 to anything not UTF-8 there.
	guessed := !certain && (name == "windows-1252" || (name == "utf-8" && !utf8.Valid(data)))
	if utf16Order(data) != 0 || guessed {
		s, _ := decodeText(data)
		data = []byte(s)
	} else if decoded, err := enc.NewDecoder().Bytes(data); err == nil {
		data = decoded
	}
	data = selfClosedRawText.ReplaceAll(data, []byte("<$1$2></$1>"))
	return html.Parse(bytes.NewReader(data))
}

// selfClosedRawText matches XHTML's "<title/>" and the like: to an HTML
// parser they open an element whose text runs to its end tag, which would
// swallow the rest of an e-book's chapter.
var selfClosedRawText = regexp.MustCompile(`(?i)<(title|script|style|textarea|iframe|noscript|noembed|noframes|xmp)(\s[^<>]*?)?\s*/>`)

// htmlTitle returns the page's <title>, else its og:title.
func htmlTitle(root *html.Node) string {
	if t := findElement(root, atom.Title); t != nil {
		if s := clean(nodeText(t)); s != "" {
			return s
		}
	}
	var og string
	walkElements(root, func(n *html.Node) bool {
		if n.DataAtom == atom.Meta && (attr(n, "property") == "og:title" || attr(n, "name") == "title") {
			og = attr(n, "content")
			return false
		}
		return og == ""
	})
	return og
}

// dropped are elements that never hold a page's main text.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Footer: true, atom.Form: true,
	atom.Button: true, atom.Select: true, atom.Textarea: true, atom.Input: true,
	atom.Iframe: true, atom.Svg: true, atom.Math: true, atom.Canvas: true, atom.Object: true,
	atom.Embed: true, atom.Audio: true, atom.Video: true, atom.Map: true,
	atom.Dialog: true, atom.Menu: true, atom.Head: true, atom.Label: true,
}

// droppedRoles are ARIA roles of page furniture.
var droppedRoles = map[string]bool{
	"navigation": true, "contentinfo": true, "complementary": true, "search": true,
	"menu": true, "menubar": true, "dialog": true, "alertdialog": true, "banner": true,
	"toolbar": true, "tablist": true,
}

// Words in class and id names of page furniture, and of main text (which
// overrule them: "content has-sidebar" is content).
var (
	furnitureWords = map[string]bool{
		"nav": true, "navbar": true, "navigation": true, "menu": true, "footer": true,
		"sidebar": true, "breadcrumb": true, "breadcrumbs": true, "cookie": true,
		"cookies": true, "consent": true, "banner": true, "share": true, "sharing": true,
		"social": true, "related": true, "comments": true, "comment": true,
		"advert": true, "advertisement": true, "ads": true, "ad": true, "sponsored": true,
		"popup": true, "modal": true, "newsletter": true, "subscribe": true, "skip": true,
		"masthead": true, "toolbar": true, "pagination": true, "pager": true,
		"widget": true, "promo": true, "signup": true,
	}
	contentWords = map[string]bool{
		"content": true, "article": true, "main": true, "post": true, "entry": true,
		"story": true, "body": true, "text": true, "prose": true, "chapter": true,
	}
	wordSplit = regexp.MustCompile(`[^a-z0-9]+`)
)

// prune removes from n what is not text: scripts, styles, forms, hidden
// elements, and with furniture also navigation, footers, sidebars and the
// like, told by their tags, ARIA roles and class names.
func prune(n *html.Node, furniture bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch {
		case c.Type == html.CommentNode:
			n.RemoveChild(c)
		case c.Type == html.ElementNode && shouldDrop(c, furniture):
			n.RemoveChild(c)
		default:
			prune(c, furniture)
		}
		c = next
	}
}

func shouldDrop(n *html.Node, furniture bool) bool {
	if dropped[n.DataAtom] && (furniture || (n.DataAtom != atom.Aside && n.DataAtom != atom.Footer)) {
		return true
	}
	if _, ok := attrOK(n, "hidden"); ok {
		return true
	}
	if strings.EqualFold(attr(n, "aria-hidden"), "true") {
		return true
	}
	style := strings.ToLower(strings.ReplaceAll(attr(n, "style"), " ", ""))
	if strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden") {
		return true
	}
	if !furniture {
		return false
	}
	role := strings.ToLower(attr(n, "role"))
	if n.DataAtom == atom.Header || role == "banner" {
		// A header that holds the page's title heading and little else
		// is kept; a site's banner of links is not.
		return !(hasHeading(n) && linkDensity(n) < 0.5)
	}
	if droppedRoles[role] {
		return true
	}
	switch n.DataAtom {
	case atom.Body, atom.Html, atom.Main, atom.Article:
		return false
	}
	names := strings.ToLower(attr(n, "class") + " " + attr(n, "id"))
	if strings.TrimSpace(names) == "" {
		return false
	}
	bad := false
	for _, w := range wordSplit.Split(names, -1) {
		if contentWords[w] {
			return false
		}
		if furnitureWords[w] {
			bad = true
		}
	}
	return bad
}

// mainContent picks the element that holds the page's main text: its
// <main> (or role=main), else an <article> that holds most of the text,
// else the smallest element that holds at least four fifths of the text
// outside links, widened to take in paragraphs of prose beside it.
func mainContent(body *html.Node) *html.Node {
	prose := map[*html.Node]int{}
	proseLens(body, prose)
	proseLen := func(n *html.Node) int { return prose[n] }
	total := proseLen(body)
	if total == 0 {
		return body
	}
	var mains, articles []*html.Node
	walkElements(body, func(n *html.Node) bool {
		switch {
		case n.DataAtom == atom.Main || strings.EqualFold(attr(n, "role"), "main"):
			mains = append(mains, n)
			return false
		case n.DataAtom == atom.Article:
			articles = append(articles, n)
			return false
		}
		return true
	})
	for _, m := range mains {
		if proseLen(m)*2 >= total {
			return m
		}
	}
	for _, a := range articles {
		if proseLen(a)*10 >= total*6 {
			return a
		}
	}
	cur := body
	for {
		var next *html.Node
		for c := cur.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && proseLen(c)*5 >= total*4 {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		cur = next
	}
	// Widen to the parent while a sibling holds a paragraph of prose:
	// an introduction beside the long part is main text too.
	for cur != body && cur.Parent != nil {
		widen := false
		for c := cur.Parent.FirstChild; c != nil && !widen; c = c.NextSibling {
			widen = c != cur && c.Type == html.ElementNode && hasProseParagraph(c, prose)
		}
		if !widen {
			break
		}
		cur = cur.Parent
	}
	return cur
}

// minProseParagraph is the text outside links, in bytes, of a paragraph
// that counts as prose rather than a caption or a link with a few words.
const minProseParagraph = 100

// hasProseParagraph reports a <p> or <blockquote> under n with at least
// minProseParagraph bytes of text, hardly any of it in links.
func hasProseParagraph(n *html.Node, prose map[*html.Node]int) bool {
	found := false
	walkElements(n, func(c *html.Node) bool {
		if found {
			return false
		}
		if c.DataAtom == atom.P || c.DataAtom == atom.Blockquote {
			if p := prose[c]; p >= minProseParagraph && linkDensity(c) < 0.25 {
				found = true
			}
			return false
		}
		return true
	})
	return found
}

// proseLens records for n and every element under it the bytes of text
// outside links, and returns n's.
func proseLens(n *html.Node, m map[*html.Node]int) int {
	switch {
	case n.Type == html.TextNode:
		return len(strings.TrimSpace(n.Data))
	case n.Type == html.ElementNode && n.DataAtom == atom.A:
		return 0
	}
	sum := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sum += proseLens(c, m)
	}
	m[n] = sum
	return sum
}

// proseLen counts the bytes of text in n outside links.
func proseLen(n *html.Node) int {
	switch {
	case n.Type == html.TextNode:
		return len(strings.TrimSpace(n.Data))
	case n.Type == html.ElementNode && n.DataAtom == atom.A:
		return 0
	}
	sum := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		sum += proseLen(c)
	}
	return sum
}

// linkDensity is the share of n's text inside links.
func linkDensity(n *html.Node) float64 {
	all := len(clean(nodeText(n)))
	if all == 0 {
		return 0
	}
	return 1 - float64(proseLen(n))/float64(all)
}

func hasHeading(n *html.Node) bool {
	found := false
	walkElements(n, func(c *html.Node) bool {
		if headingLevel(c) > 0 {
			found = true
		}
		return !found
	})
	return found
}

// headingLevel is 1-6 for h1-h6, 0 otherwise.
func headingLevel(n *html.Node) int {
	switch n.DataAtom {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// blocks are elements that start and end a paragraph.
var blocks = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Blockquote: true,
	atom.Body: true, atom.Center: true, atom.Dd: true, atom.Details: true, atom.Dir: true,
	atom.Div: true, atom.Dl: true, atom.Dt: true, atom.Fieldset: true, atom.Figcaption: true,
	atom.Figure: true, atom.Footer: true, atom.Form: true, atom.Header: true, atom.Hgroup: true,
	atom.Hr: true, atom.Html: true, atom.Li: true, atom.Main: true, atom.Nav: true,
	atom.Ol: true, atom.P: true, atom.Pre: true, atom.Section: true, atom.Summary: true,
	atom.Table: true, atom.Tbody: true, atom.Td: true, atom.Tfoot: true, atom.Th: true,
	atom.Thead: true, atom.Tr: true, atom.Ul: true, atom.Caption: true, atom.Legend: true,
	atom.Option: true,
}

// htmlWalker turns a tree into paragraphs.
type htmlWalker struct {
	b       builder
	cur     strings.Builder
	linkLen int // bytes of cur inside links
	inLink  int
	inPre   int
	brs     int // consecutive <br>s
}

// flush ends the paragraph being collected; a paragraph made mostly of
// links (a menu that slipped through, a list of tags) is dropped.
func (w *htmlWalker) flush() {
	text := clean(w.cur.String())
	links := w.linkLen
	w.cur.Reset()
	w.linkLen = 0
	w.brs = 0
	if text == "" {
		return
	}
	if links*10 > len(text)*6 && len(strings.Fields(text)) < 12 {
		return
	}
	w.b.add(text, false, 0)
}

func (w *htmlWalker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
	default:
		return
	}
	if headingLevel(n) > 0 {
		w.flush()
		w.b.add(nodeText(n), true, 0)
		return
	}
	switch n.DataAtom {
	case atom.Br:
		w.brs++
		if w.brs >= 2 {
			w.flush()
		} else {
			w.cur.WriteByte(' ')
		}
		return
	case atom.Img:
		return
	case atom.A:
		w.inLink++
		defer func() { w.inLink-- }()
	case atom.Pre:
		w.inPre++
		defer func() { w.inPre-- }()
	}
	block := blocks[n.DataAtom]
	if block {
		w.flush()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if block {
		w.flush()
	}
}

var blankLines = regexp.MustCompile(`\n[ \t\r]*\n`)

func (w *htmlWalker) text(s string) {
	if strings.TrimSpace(s) != "" {
		w.brs = 0
	}
	if w.inPre == 0 {
		w.write(s)
		return
	}
	parts := blankLines.Split(s, -1)
	for i, p := range parts {
		if i > 0 {
			w.flush()
		}
		w.write(p)
	}
}

func (w *htmlWalker) write(s string) {
	w.cur.WriteString(s)
	if w.inLink > 0 {
		w.linkLen += len(clean(s))
	}
}

// nodeText is all the text under n, with blocks and line breaks as spaces.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template:
				return
			case atom.Br:
				b.WriteByte(' ')
				return
			}
			if blocks[n.DataAtom] {
				b.WriteByte(' ')
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

// walkElements calls f on every element under n (n included) in document
// order; f returns false to skip an element's children.
func walkElements(n *html.Node, f func(*html.Node) bool) {
	if n.Type == html.ElementNode && !f(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkElements(c, f)
	}
}

// findElement returns the first element a under n.
func findElement(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walkElements(n, func(c *html.Node) bool {
		if found != nil {
			return false
		}
		if c.DataAtom == a {
			found = c
			return false
		}
		return true
	})
	return found
}

// contains reports whether c lies under n.
func contains(n, c *html.Node) bool {
	for ; c != nil; c = c.Parent {
		if c == n {
			return true
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	v, _ := attrOK(n, key)
	return v
}

func attrOK(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}
