// Package markdown is the one way Warden renders documents people write
// (runbooks, SKILL.md instructions) to HTML: goldmark, with raw HTML never
// passed through but shown as the text it was written as, so a "<script>"
// in a document reads as text. A document's headings sit one level below
// the page's own h1 (its "# Title" becomes an h2), so a page keeps one h1
// and its outline reads page, then document.
//
//	md := markdown.New(&frontmatter.Extender{})
//	err := md.Convert(src, &out, parser.WithContext(ctx))
package markdown

import (
	"html"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// New returns a goldmark converter with exts that escapes raw HTML.
// Without goldmark.WithUnsafe goldmark drops raw HTML; escapeRaw shows it
// as text instead, so nothing a document says disappears silently.
func New(exts ...goldmark.Extender) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(exts...),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(headingsBelowPage{}, 100))),
		goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(escapeRaw{}, 100))),
	)
}

// escapeRaw renders raw HTML (blocks and inline) as the escaped text it
// was written as.
type escapeRaw struct{}

func (escapeRaw) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString("<pre class=\"raw-html\">")
		for i := 0; i < b.Lines().Len(); i++ {
			seg := b.Lines().At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
		}
		if b.HasClosure() {
			_, _ = w.WriteString(html.EscapeString(string(b.ClosureLine.Value(src))))
		}
		_, _ = w.WriteString("</pre>\n")
		return ast.WalkContinue, nil
	})
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		segs := n.(*ast.RawHTML).Segments
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(s.Value(src))))
		}
		return ast.WalkSkipChildren, nil
	})
}

// headingsBelowPage moves every heading of a document one level down
// (an h6 stays h6): the page that shows the document has its own h1, and
// a second h1 from the document would tell a screen reader the page has
// two titles.
type headingsBelowPage struct{}

func (headingsBelowPage) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering && h.Level < 6 {
			h.Level++
		}
		return ast.WalkContinue, nil
	})
}
