package vault

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/adrg/frontmatter"
	"go.yaml.in/yaml/v3"
)

// yamlFormat reads "---" delimited YAML frontmatter with yaml v3, into a
// node so that keys keep the order the person wrote them in.
var yamlFormat = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

// Doc is a Markdown file with YAML frontmatter: the keys in file order
// and the body after the frontmatter. Set and Render keep unknown keys
// and their order, so a person's own keys survive Sett's rewrites.
//
// Set, Delete and EditBody also record the change, so that ReplayOn can
// apply the same changes to a fresher read of the file: Sett's updates
// merge into what the person has now, never rewrite an old read.
type Doc struct {
	keys []string
	vals map[string]string
	Body string
	ops  []func(*Doc)
}

// ParseDoc reads data. A file without frontmatter has no keys. Errors:
// frontmatter that is not YAML, not a mapping, or holds a list or mapping
// value (the message names the problem).
func ParseDoc(data []byte) (*Doc, error) {
	d := &Doc{vals: map[string]string{}}
	var node yaml.Node
	rest, err := frontmatter.Parse(bytes.NewReader(data), &node, yamlFormat)
	if err != nil {
		return nil, fmt.Errorf("invalid frontmatter: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	d.Body = string(rest)
	if node.Kind == 0 {
		return d, nil
	}
	m := &node
	if m.Kind == yaml.DocumentNode && len(m.Content) > 0 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("invalid frontmatter: it must be key: value lines (line %d)", m.Line+1)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("invalid frontmatter: %q (line %d) must be a single value, not a list or mapping", k.Value, k.Line+1)
		}
		if _, dup := d.vals[k.Value]; dup {
			return nil, fmt.Errorf("invalid frontmatter: %q (line %d) is given twice", k.Value, k.Line+1)
		}
		d.keys = append(d.keys, k.Value)
		d.vals[k.Value] = v.Value
	}
	return d, nil
}

// Get returns a key's value ("" when missing), trimmed.
func (d *Doc) Get(key string) string { return strings.TrimSpace(d.vals[key]) }

// Has reports whether the key is present.
func (d *Doc) Has(key string) bool { _, ok := d.vals[key]; return ok }

// Set sets a key, appending it when new.
func (d *Doc) Set(key, value string) {
	d.set(key, value)
	d.ops = append(d.ops, func(o *Doc) { o.set(key, value) })
}

func (d *Doc) set(key, value string) {
	if d.vals == nil {
		d.vals = map[string]string{}
	}
	if _, ok := d.vals[key]; !ok {
		d.keys = append(d.keys, key)
	}
	d.vals[key] = value
}

// Delete removes a key.
func (d *Doc) Delete(key string) {
	d.del(key)
	d.ops = append(d.ops, func(o *Doc) { o.del(key) })
}

// EditBody replaces the body with edit(body).
func (d *Doc) EditBody(edit func(string) string) {
	d.Body = edit(d.Body)
	d.ops = append(d.ops, func(o *Doc) { o.Body = edit(o.Body) })
}

// Changed reports whether Set, Delete or EditBody was called.
func (d *Doc) Changed() bool { return len(d.ops) > 0 }

// ReplayOn applies every change made to d (Set, Delete, EditBody, in
// order) to o, a fresher read of the same file.
func (d *Doc) ReplayOn(o *Doc) {
	for _, op := range d.ops {
		op(o)
	}
}

func (d *Doc) del(key string) {
	if _, ok := d.vals[key]; !ok {
		return
	}
	delete(d.vals, key)
	for i, k := range d.keys {
		if k == key {
			d.keys = append(d.keys[:i], d.keys[i+1:]...)
			break
		}
	}
}

// Map returns every key and value.
func (d *Doc) Map() map[string]string {
	out := make(map[string]string, len(d.vals))
	for k, v := range d.vals {
		out[k] = v
	}
	return out
}

// Render writes the document back: the frontmatter (when it has keys)
// and the body.
func (d *Doc) Render() []byte {
	var b bytes.Buffer
	if len(d.keys) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range d.keys {
			v := &yaml.Node{Kind: yaml.ScalarNode, Value: d.vals[k]}
			if v.Value == "" || strings.ContainsAny(v.Value, ":#\n'\"") || looksTyped(v.Value) {
				v.Style = yaml.DoubleQuotedStyle
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
		}
		out, _ := yaml.Marshal(m)
		b.WriteString("---\n")
		b.Write(out)
		b.WriteString("---\n")
	}
	body := d.Body
	if len(d.keys) > 0 && !strings.HasPrefix(body, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(strings.TrimLeft(body, "\n"))
	if !strings.HasSuffix(body, "\n") {
		b.WriteString("\n")
	}
	return b.Bytes()
}

// looksTyped reports whether a plain YAML scalar would read as something
// other than text (a date keeps its form either way; booleans and null
// do not).
func looksTyped(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~":
		return true
	}
	return false
}
