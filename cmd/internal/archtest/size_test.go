package archtest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Limits on files and functions (doc.go).
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// parsed is one parsed .go file of the module.
type parsed struct {
	goFile
	fset  *token.FileSet
	file  *ast.File
	lines int
}

// parseAll parses every .go file of the module with its comments.
func parseAll(t *testing.T) []parsed {
	t.Helper()
	var all []parsed
	for _, f := range goFiles(t) {
		src, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f.Path, src, parser.ParseComments)
		if err != nil {
			t.Errorf("%s: %v", f.Rel, err)
			continue
		}
		lines := bytes.Count(src, []byte("\n"))
		if len(src) > 0 && src[len(src)-1] != '\n' {
			lines++
		}
		all = append(all, parsed{goFile: f, fset: fset, file: file, lines: lines})
	}
	return all
}

// TestFileSize checks that no non-test file is over maxFileLines lines.
func TestFileSize(t *testing.T) {
	for _, p := range parseAll(t) {
		if !p.isTest() && p.lines > maxFileLines {
			t.Errorf("%s: %d lines, more than %d", p.Rel, p.lines, maxFileLines)
		}
	}
}

// TestFuncSize checks that no function, declared or literal, in any file is
// over maxFuncLines lines, from its func keyword to its closing brace.
func TestFuncSize(t *testing.T) {
	for _, p := range parseAll(t) {
		ast.Inspect(p.file, func(n ast.Node) bool {
			var name string
			var body *ast.BlockStmt
			switch fn := n.(type) {
			case *ast.FuncDecl:
				name, body = funcName(fn), fn.Body
			case *ast.FuncLit:
				name, body = "func literal", fn.Body
			default:
				return true
			}
			if body == nil {
				return true
			}
			start := p.fset.Position(n.Pos())
			if lines := p.fset.Position(body.End()).Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines, more than %d", p.Rel, start.Line, name, lines, maxFuncLines)
			}
			return true
		})
	}
}

// funcName returns "Name" for a function and "Recv.Name" for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// TestDocCommentsNameTheirDeclaration checks that the doc comment of every
// func, method and type declaration in non-test code starts with the
// declared name, optionally after "A", "An" or "The". A test's comment says
// what it checks in prose; go doc never shows it.
func TestDocCommentsNameTheirDeclaration(t *testing.T) {
	for _, p := range parseAll(t) {
		if p.isTest() {
			continue
		}
		for _, decl := range p.file.Decls {
			for _, d := range documented(decl) {
				if !startsWithName(d.doc.Text(), d.name) {
					line := p.fset.Position(d.doc.Pos()).Line
					t.Errorf("%s:%d: the doc comment of %s starts %q", p.Rel, line, d.name, firstWords(d.doc.Text()))
				}
			}
		}
	}
}

// docd is a declared name with its doc comment.
type docd struct {
	name string
	doc  *ast.CommentGroup
}

// documented returns the funcs, methods and types decl declares that have a
// doc comment. A type in a group takes its own comment, or the group's if it
// is the group's only spec.
func documented(decl ast.Decl) []docd {
	var out []docd
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			out = append(out, docd{d.Name.Name, d.Doc})
		}
	case *ast.GenDecl:
		if d.Tok != token.TYPE {
			return nil
		}
		for _, spec := range d.Specs {
			ts := spec.(*ast.TypeSpec)
			doc := ts.Doc
			if doc == nil && len(d.Specs) == 1 {
				doc = d.Doc
			}
			if doc != nil {
				out = append(out, docd{ts.Name.Name, doc})
			}
		}
	}
	return out
}

// startsWithName reports whether text starts with name as a whole word,
// optionally after "A", "An" or "The". Text with no words (a comment made of
// directives only) passes.
func startsWithName(text, name string) bool {
	words := strings.Fields(text)
	if len(words) == 0 {
		return true
	}
	if len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") && hasName(words[1], name) {
		return true
	}
	return hasName(words[0], name)
}

// hasName reports whether word is name, or name followed by a character
// that cannot continue an identifier ("Name's", "Name,").
func hasName(word, name string) bool {
	rest, ok := strings.CutPrefix(word, name)
	if !ok {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}

// firstWords returns the first few words of a doc comment for a failure
// message.
func firstWords(text string) string {
	words := strings.Fields(text)
	if len(words) > 6 {
		words = append(words[:6], "…")
	}
	return strings.Join(words, " ")
}
