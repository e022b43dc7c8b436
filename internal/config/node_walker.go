package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// nodeWalker checks a YAML tree against the Go type it will be decoded into,
// before it is decoded, and records the line of every key in a source.
//
// yaml.v3 with KnownFields(true) stops at the first problem and words it in
// Go terms ("field x not found in type config.AgentConfig",
// "cannot unmarshal !!str into config.Duration"). Walking the tree first
// lets Parse report every unknown key, wrong type and duplicate key at
// once, each with its line and dotted path, in the words of sett.yml.
type nodeWalker struct {
	src  *source
	errs []FieldError
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// walk checks n against t. path is the dotted path of n ("" for the root).
func (w *nodeWalker) walk(n *yaml.Node, t reflect.Type, path string) {
	n = resolveAlias(n)
	if isNull(n) {
		// Null decodes to the zero value of any type; defaults apply.
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		// Duration and ByteSize: their own decoder is the type check.
		u := reflect.New(t).Interface().(yaml.Unmarshaler)
		if err := u.UnmarshalYAML(n); err != nil {
			w.typeError(n, path, err.Error())
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.walk(n, t.Elem(), path)
	case reflect.Struct:
		w.walkStruct(n, t, path)
	case reflect.Map:
		w.walkMap(n, t, path)
	case reflect.Slice:
		w.walkSlice(n, t, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			w.typeError(n, path, "expected a string, got "+describeNode(n))
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode {
			w.typeError(n, path, "expected true or false, got "+describeNode(n))
		} else if n.Tag != "!!bool" {
			w.typeError(n, path, fmt.Sprintf("%q is not a boolean (use true or false)", n.Value))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.checkInt(n, t, path)
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode {
			w.typeError(n, path, "expected a number, got "+describeNode(n))
		} else if n.Tag != "!!int" && n.Tag != "!!float" {
			w.typeError(n, path, fmt.Sprintf("%q is not a number", n.Value))
		}
	default:
		// The schema uses no other kinds; a new one must be added here.
		panic("config: nodeWalker: unsupported kind " + t.Kind().String())
	}
}

// integerLike matches what a person means as an integer, including values
// yaml resolves to !!float because they do not fit in an int64.
var integerLike = regexp.MustCompile(`^[-+]?[0-9][0-9_]*$`)

func (w *nodeWalker) checkInt(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.ScalarNode {
		w.typeError(n, path, "expected an integer, got "+describeNode(n))
		return
	}
	switch {
	case n.Tag == "!!int":
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			w.typeError(n, path, fmt.Sprintf("%s is out of range for an integer", n.Value))
		}
	case n.Tag == "!!float" && integerLike.MatchString(n.Value):
		w.typeError(n, path, fmt.Sprintf("%s is out of range for an integer", n.Value))
	case n.Tag == "!!str" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 && integerLike.MatchString(n.Value):
		w.typeError(n, path, fmt.Sprintf("%q is not an integer (write it without quotes)", n.Value))
	default:
		w.typeError(n, path, fmt.Sprintf("%q is not an integer", n.Value))
	}
}

// entry is one key: value pair of a mapping.
type entry struct {
	key, value *yaml.Node
	// merged is true for pairs that come from a "<<" merge key; explicit
	// keys override them, as in yaml.v3.
	merged bool
}

// entries returns the pairs of mapping n with merge keys expanded. It
// reports a non-scalar key as a type error and skips it.
func (w *nodeWalker) entries(n *yaml.Node, path string, merged bool) []entry {
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			w.typeError(k, path, "a key must be a plain string, got "+describeNode(k))
			continue
		}
		if k.Tag == "!!merge" {
			v = resolveAlias(v)
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, m := range sources {
				m = resolveAlias(m)
				if m.Kind != yaml.MappingNode {
					w.typeError(m, path, "a merge (<<) needs a mapping, got "+describeNode(m))
					continue
				}
				out = append(out, w.entries(m, path, true)...)
			}
			continue
		}
		out = append(out, entry{key: k, value: v, merged: merged})
	}
	return out
}

// keyed walks the entries of mapping n, reporting duplicate keys and
// recording lines, and calls visit once for each key.
func (w *nodeWalker) keyed(n *yaml.Node, path string, visit func(e entry, childPath string)) {
	all := w.entries(n, path, false)
	explicit := make(map[string]bool)
	for _, e := range all {
		if !e.merged {
			explicit[e.key.Value] = true
		}
	}
	visited := make(map[string]int) // key -> line of the pair that counts
	for _, e := range all {
		name := e.key.Value
		child := joinPath(path, name)
		first, dup := visited[name]
		switch {
		case e.merged && (explicit[name] || dup):
			// An explicit key overrides a merged one, and the first merge
			// source wins over later ones.
			continue
		case dup:
			w.errs = append(w.errs, FieldError{
				File: w.src.file, Line: e.key.Line, Path: child, Err: ErrType,
				Message: fmt.Sprintf("key %q appears twice (first at line %d)", name, first),
			})
			continue
		}
		visited[name] = e.key.Line
		w.src.lines[child] = e.key.Line
		if !isNull(resolveAlias(e.value)) {
			w.src.set[child] = true
		}
		visit(e, child)
	}
}

func (w *nodeWalker) walkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.typeError(n, path, "expected a mapping of keys, got "+describeNode(n))
		return
	}
	fields, names := yamlFields(t)
	w.keyed(n, path, func(e entry, child string) {
		f, ok := fields[e.key.Value]
		if !ok {
			if why, removed := removedKeys[child]; removed {
				w.errs = append(w.errs, FieldError{
					File: w.src.file, Line: e.key.Line, Path: child, Err: ErrUnknownKey,
					Message: fmt.Sprintf("key %q %s", child, why),
				})
				return
			}
			where := "at the top level"
			if path != "" {
				where = "in " + path
			}
			w.errs = append(w.errs, FieldError{
				File: w.src.file, Line: e.key.Line, Path: child, Err: ErrUnknownKey,
				Message: fmt.Sprintf("unknown key %q %s (known keys: %s)", e.key.Value, where, strings.Join(names, ", ")),
			})
			return
		}
		w.walk(e.value, f.Type, child)
	})
}

func (w *nodeWalker) walkMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		w.typeError(n, path, "expected a mapping, got "+describeNode(n))
		return
	}
	w.keyed(n, path, func(e entry, child string) {
		w.walk(e.value, t.Elem(), child)
	})
}

func (w *nodeWalker) walkSlice(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.SequenceNode {
		what := "a list"
		if t.Elem().Kind() == reflect.String {
			what = "a list of strings"
		}
		w.typeError(n, path, fmt.Sprintf("expected %s, got %s", what, describeNode(n)))
		return
	}
	for i, item := range n.Content {
		child := path + "[" + strconv.Itoa(i) + "]"
		w.src.lines[child] = item.Line
		w.src.set[child] = true
		w.walk(item, t.Elem(), child)
	}
}

func (w *nodeWalker) typeError(n *yaml.Node, path, msg string) {
	w.errs = append(w.errs, FieldError{File: w.src.file, Line: n.Line, Path: path, Message: msg, Err: ErrType})
}

// yamlFields returns the fields of struct t by yaml key, and the keys in
// declaration order for messages. Unexported fields and fields tagged
// yaml:"-" are not keys.
func yamlFields(t reflect.Type) (map[string]reflect.StructField, []string) {
	fields := make(map[string]reflect.StructField)
	var names []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's rule for untagged fields
		}
		fields[name] = f
		names = append(names, name)
	}
	return fields, names
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describeNode names what a node is, for "expected X, got Y" messages.
func describeNode(n *yaml.Node) string {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing (null)"
		}
		return strconv.Quote(n.Value)
	}
	return "a YAML " + fmt.Sprint(n.Kind)
}
