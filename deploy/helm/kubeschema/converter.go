package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Special definitions of the Kubernetes API whose swagger type is narrower
// than what the API server accepts.
const (
	// intOrStringFormat marks intstr.IntOrString (ports, maxSurge): the
	// server takes 8080 as well as "http" or "25%".
	intOrStringFormat = "int-or-string"
	// quantityDef is resource.Quantity: "500m" as well as 1 or 0.5.
	quantityDef = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	refPrefix   = "#/definitions/"
)

// Converter turns the definitions of a Kubernetes swagger.json (OpenAPI
// v2) into standalone JSON schemas, one per kind, in the strict form
// kubeconform's -strict expects: an object with declared properties takes
// no other field, so a misspelt key in a template is an error rather than
// a field the API server silently drops.
//
// The zero value is not usable; build one with NewConverter. A Converter
// is not safe for concurrent use.
type Converter struct {
	defs map[string]any
}

// NewConverter returns a Converter over the "definitions" object of a
// swagger document.
func NewConverter(definitions map[string]any) *Converter {
	return &Converter{defs: definitions}
}

// Kinds lists every group/version/kind the definitions declare, with the
// name of the definition that describes it, sorted by file name.
func (c *Converter) Kinds() ([]GVK, map[GVK]string) {
	defOf := map[GVK]string{}
	for name, def := range c.defs {
		m, _ := def.(map[string]any)
		list, _ := m["x-kubernetes-group-version-kind"].([]any)
		for _, item := range list {
			g, _ := item.(map[string]any)
			gvk := GVK{Group: str(g["group"]), Version: str(g["version"]), Kind: str(g["kind"])}
			if gvk.Kind != "" && gvk.Version != "" {
				defOf[gvk] = name
			}
		}
	}
	kinds := slices.Collect(maps.Keys(defOf))
	slices.SortFunc(kinds, func(a, b GVK) int { return strings.Compare(a.FileName(), b.FileName()) })
	return kinds, defOf
}

// Schema returns the standalone schema of definition name: its converted
// body at the root, and every definition it reaches through $ref under
// "definitions", so that the file resolves without any other.
// It fails when a $ref points at a definition the document lacks.
func (c *Converter) Schema(name string, gvk GVK) (map[string]any, error) {
	root, ok := c.defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("kubeschema: no definition %q", name)
	}
	return c.standalone(root, gvk)
}

// CRDSchema returns the standalone schema of a CustomResourceDefinition
// version's openAPIV3Schema (a CRD schema has no $ref, so it needs no
// definitions of its own).
func CRDSchema(openAPIV3Schema map[string]any, gvk GVK) (map[string]any, error) {
	return NewConverter(nil).standalone(openAPIV3Schema, gvk)
}

func (c *Converter) standalone(root map[string]any, gvk GVK) (map[string]any, error) {
	reached := map[string]bool{}
	if err := c.reach(root, reached); err != nil {
		return nil, fmt.Errorf("kubeschema: %s: %w", gvk.Kind, err)
	}
	out := c.convert(root, true).(map[string]any)
	// The document is picked by its apiVersion and kind, so these two
	// are known; pinning them catches a file validated against the
	// wrong schema.
	apiVersion := gvk.Version
	if gvk.Group != "" {
		apiVersion = gvk.Group + "/" + gvk.Version
	}
	if props, ok := out["properties"].(map[string]any); ok {
		if _, ok := props["apiVersion"]; ok {
			props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
		}
		if _, ok := props["kind"]; ok {
			props["kind"] = map[string]any{"type": "string", "enum": []any{gvk.Kind}}
		}
	}
	if len(reached) > 0 {
		defs := map[string]any{}
		for d := range reached {
			defs[d] = c.convertDefinition(d)
		}
		out["definitions"] = defs
	}
	out["$schema"] = "http://json-schema.org/draft-07/schema#"
	return out, nil
}

// reach adds to seen every definition node refers to, transitively.
func (c *Converter) reach(node any, seen map[string]bool) error {
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			name, ok := strings.CutPrefix(ref, refPrefix)
			if !ok {
				return fmt.Errorf("$ref %q is not a local definition", ref)
			}
			if seen[name] {
				return nil
			}
			def, ok := c.defs[name]
			if !ok {
				return fmt.Errorf("$ref %q: no such definition", ref)
			}
			seen[name] = true
			return c.reach(def, seen)
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if err := c.reach(n[k], seen); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := c.reach(v, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// convert returns the JSON-schema form of one swagger schema node. It
// keeps only what validates (types, properties, items, maps, required,
// enums, refs), drops descriptions and x- extensions, and:
//   - closes every object that declares properties (additionalProperties
//     false) unless it preserves unknown fields;
//   - lets IntOrString take a string or an integer and Quantity a string
//     or a number;
//   - accepts null wherever a value is optional, as the API server treats
//     an explicit null as "not set" (a chart's `resources: ~` is valid).
//     The root object itself stays non-null.
func (c *Converter) convert(node any, root bool) any {
	n, ok := node.(map[string]any)
	if !ok {
		return node
	}
	if ref, ok := n["$ref"].(string); ok {
		return map[string]any{"$ref": ref}
	}
	if n["format"] == intOrStringFormat || n["x-kubernetes-int-or-string"] == true {
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "integer"}, map[string]any{"type": "null"},
		}}
	}
	if n["x-kubernetes-preserve-unknown-fields"] == true && n["properties"] == nil {
		// Free-form (RawExtension-like): anything goes.
		return map[string]any{}
	}
	out := map[string]any{}
	for _, k := range []string{"format", "required", "minimum", "maximum", "pattern", "minItems", "maxItems", "minLength", "maxLength"} {
		if v, ok := n[k]; ok {
			out[k] = v
		}
	}
	if t, ok := n["type"].(string); ok {
		if root {
			out["type"] = t
		} else {
			out["type"] = []any{t, "null"}
		}
	}
	if e, ok := n["enum"].([]any); ok {
		out["enum"] = append(slices.Clone(e), nil)
	}
	if props, ok := n["properties"].(map[string]any); ok {
		conv := make(map[string]any, len(props))
		for k, v := range props {
			conv[k] = c.convert(v, false)
		}
		out["properties"] = conv
		if _, declared := n["additionalProperties"]; !declared && n["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
	}
	if ap, ok := n["additionalProperties"]; ok {
		out["additionalProperties"] = c.convert(ap, false)
	}
	if items, ok := n["items"]; ok {
		out["items"] = c.convert(items, false)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := n[k].([]any); ok {
			conv := make([]any, len(list))
			for i, v := range list {
				conv[i] = c.convert(v, false)
			}
			out[k] = conv
		}
	}
	return out
}

// convertDefinition is convert for a named definition: Quantity is a
// plain string in swagger but a number is as good.
func (c *Converter) convertDefinition(name string) any {
	if name == quantityDef {
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "null"},
		}}
	}
	return c.convert(c.defs[name], false)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
