package config

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// updateReference rewrites docs/configuration.md's generated part:
//
//	go test ./internal/config -run TestConfigurationReference -update
var updateReference = flag.Bool("update", false, "rewrite the key table of docs/configuration.md from the config structs")

const (
	referencePath  = "../../docs/configuration.md"
	referenceBegin = "<!-- BEGIN GENERATED KEYS: go test ./internal/config -run TestConfigurationReference -update -->"
	referenceEnd   = "<!-- END GENERATED KEYS -->"
)

// referenceKey is one sett.yml key: its dotted path, the kind of value it
// takes and the doc comment of its struct field.
type referenceKey struct {
	path, kind, doc string
}

// fieldDocs reads the doc comments of every struct field in this package's
// non-test files: type name → field name → comment text. A field without
// a comment shares the one of the field before it ("CertFile and KeyFile
// are ..."). The type's own doc comment is kept under the name "".
func fieldDocs(t *testing.T) map[string]map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				typeDoc := ts.Doc.Text()
				if typeDoc == "" && len(gd.Specs) == 1 {
					typeDoc = gd.Doc.Text()
				}
				m := map[string]string{"": typeDoc}
				prev := ""
				for _, fl := range st.Fields.List {
					text := fl.Doc.Text()
					if text == "" {
						text = fl.Comment.Text()
					}
					if text == "" {
						text = prev
					}
					prev = text
					for _, id := range fl.Names {
						m[id.Name] = text
					}
				}
				docs[ts.Name.Name] = m
			}
		}
	}
	return docs
}

// referenceKeys walks Config as the YAML decoder sees it and returns every
// key, in declaration order. A map of structs (agents) contributes
// "<name>" as a path element.
func referenceKeys(t *testing.T) []referenceKey {
	t.Helper()
	docs := fieldDocs(t)
	leaf := map[reflect.Type]string{
		reflect.TypeOf(Duration(0)): "duration",
		reflect.TypeOf(ByteSize(0)): "size",
	}
	var keys []referenceKey
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if tag == "" {
				t.Fatalf("%s.%s has no yaml tag", typ.Name(), f.Name)
			}
			path := prefix + tag
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			doc := userDoc(f.Name, docs[typ.Name()][f.Name])
			if ft.Kind() == reflect.Struct && leaf[ft] == "" && docs[ft.Name()][""] != "" {
				// A section: its type says what it is.
				doc = userDoc(ft.Name(), docs[ft.Name()][""])
			}
			switch {
			case leaf[ft] != "":
				keys = append(keys, referenceKey{path, leaf[ft], doc})
			case ft.Kind() == reflect.Struct:
				keys = append(keys, referenceKey{path, "section", doc})
				walk(path+".", ft)
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				keys = append(keys, referenceKey{path, "map of sections", doc})
				walk(path+".<name>.", ft.Elem())
			case ft.Kind() == reflect.Map:
				keys = append(keys, referenceKey{path, "map of " + kindName(ft.Elem(), leaf), doc})
			case ft.Kind() == reflect.Slice:
				keys = append(keys, referenceKey{path, "list of " + kindName(ft.Elem(), leaf), doc})
			default:
				keys = append(keys, referenceKey{path, kindName(ft, leaf), doc})
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	return keys
}

// userDoc turns a Go doc comment into the reference's text: one line,
// without the leading identifier ("BidTimeout is how long ..." reads "How
// long ...").
func userDoc(name, doc string) string {
	doc = strings.Join(strings.Fields(doc), " ")
	rest, ok := strings.CutPrefix(doc, name+" ")
	if !ok || strings.HasPrefix(rest, "and ") {
		return doc
	}
	for _, verb := range []string{"is ", "are "} {
		rest = strings.TrimPrefix(rest, verb)
	}
	if rest == "" {
		return doc
	}
	return strings.ToUpper(rest[:1]) + rest[1:]
}

func kindName(t reflect.Type, leaf map[reflect.Type]string) string {
	if k := leaf[t]; k != "" {
		return k
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	default:
		return t.Kind().String()
	}
}

// renderReference is the generated table.
func renderReference(keys []referenceKey) string {
	var b strings.Builder
	b.WriteString(referenceBegin + "\n\n")
	b.WriteString("| Key | Value | Meaning and default |\n|---|---|---|\n")
	for _, k := range keys {
		doc := strings.ReplaceAll(k.doc, "|", `\|`)
		b.WriteString("| `" + k.path + "` | " + k.kind + " | " + doc + " |\n")
	}
	b.WriteString("\n" + referenceEnd)
	return b.String()
}

// TestConfigurationReference keeps docs/configuration.md's key table equal
// to the config structs: every key the YAML decoder accepts is listed,
// with its field's doc comment, and nothing else is. A key listed in the
// hand-written part of the page must exist too.
func TestConfigurationReference(t *testing.T) {
	keys := referenceKeys(t)
	if len(keys) < 100 {
		t.Fatalf("found only %d keys in Config: the walk is broken", len(keys))
	}
	for _, k := range keys {
		if k.doc == "" {
			t.Errorf("sett.yml key %s has no doc comment on its struct field: add one (it is the reference's text)", k.path)
		}
	}
	raw, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	before, rest, ok1 := strings.Cut(page, referenceBegin)
	_, after, ok2 := strings.Cut(rest, referenceEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers %q and %q around its key table", referencePath, referenceBegin, referenceEnd)
	}
	want := renderReference(keys)
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(before+want+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := referenceBegin + rest[:strings.Index(rest, referenceEnd)] + referenceEnd; got != want {
		listed := map[string]bool{}
		for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(got, -1) {
			listed[m[1]] = true
		}
		for _, k := range keys {
			if !listed[k.path] {
				t.Errorf("%s does not list the key %s", referencePath, k.path)
			}
			delete(listed, k.path)
		}
		var extra []string
		for k := range listed {
			extra = append(extra, k)
		}
		sort.Strings(extra)
		for _, k := range extra {
			t.Errorf("%s lists %s, which is no key of the config structs", referencePath, k)
		}
		t.Errorf("%s's key table is stale: run go test ./internal/config -run TestConfigurationReference -update", referencePath)
	}
	// Keys cited in the hand-written prose must be real too.
	known := map[string]bool{}
	for _, k := range keys {
		known[k.path] = true
		if k.kind == "map of sections" {
			known[k.path+".<name>"] = true
		}
	}
	for _, m := range regexp.MustCompile("`((?:orchestrator|agents|approvals|escalation|vault|retention|services)\\.[a-z_.<>]+)`").FindAllStringSubmatch(before+after, -1) {
		if !known[m[1]] {
			t.Errorf("%s cites `%s`, which is no key of the config structs", referencePath, m[1])
		}
	}
}
