package main

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// module is the module path: a package "monomer/bow" is in root/bow.
const module = "monomer"

// A source is the parsed non-test files of one package, for the doc
// comments reflection cannot see.
type source struct {
	types map[string]*ast.TypeSpec // by name, with the doc comment in doc
	docs  map[string]*ast.CommentGroup
	files []*ast.File
}

var parsed = map[string]*source{}

// load parses the package at import path pkg.
func load(root, pkg string) (*source, error) {
	if s, ok := parsed[pkg]; ok {
		return s, nil
	}
	rel, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return nil, fmt.Errorf("package %s is not in module %s", pkg, module)
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	s := &source{types: map[string]*ast.TypeSpec{}, docs: map[string]*ast.CommentGroup{}}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				s.types[ts.Name.Name] = ts
				s.docs[ts.Name.Name] = ts.Doc
				if ts.Doc == nil && len(g.Specs) == 1 {
					s.docs[ts.Name.Name] = g.Doc
				}
			}
		}
	}
	parsed[pkg] = s
	return s, nil
}

// typeDoc is the doc comment of type name.
func (s *source) typeDoc(name string) (string, error) {
	d, ok := s.docs[name]
	if !ok {
		return "", fmt.Errorf("no type %s", name)
	}
	return d.Text(), nil
}

// fieldDoc is the doc comment of field of struct type name.
func (s *source) fieldDoc(name, field string) (string, error) {
	f, err := s.field(name, field)
	if err != nil {
		return "", err
	}
	return f.Doc.Text(), nil
}

// field is field of struct type name.
func (s *source) field(name, field string) (*ast.Field, error) {
	ts, ok := s.types[name]
	if !ok {
		return nil, fmt.Errorf("no type %s", name)
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", name)
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name == field {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("%s has no field %s", name, field)
}

// markdown turns a doc comment into Markdown. A comment that starts with
// the Go name it documents (Go style: "VocabSize is ...") starts with
// the name the reader writes instead ("`vocab_size` is ...").
func markdown(text, goName, userName string) string {
	var p comment.Parser
	var pr comment.Printer
	md := string(pr.Markdown(p.Parse(text)))
	if rest, ok := strings.CutPrefix(md, goName+" "); ok && goName != "" {
		md = "`" + userName + "` " + rest
	}
	return md
}
