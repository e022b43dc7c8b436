package main

import (
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// crdFlag collects -crd MODULE@VERSION:PATH arguments: a
// CustomResourceDefinition file inside a Go module the proxy serves.
type crdFlag []string

func (f *crdFlag) String() string { return strings.Join(*f, ",") }

func (f *crdFlag) Set(v string) error {
	mod, path, ok := strings.Cut(v, ":")
	if !ok || !strings.Contains(mod, "@") || path == "" {
		return fmt.Errorf("want MODULE@VERSION:PATH (e.g. github.com/prometheus-operator/prometheus-operator@v0.85.0:example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml), got %q", v)
	}
	*f = append(*f, v)
	return nil
}

// crdDoc is the part of a CustomResourceDefinition the schemas come from.
type crdDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Group string `yaml:"group"`
		Names struct {
			Kind string `yaml:"kind"`
		} `yaml:"names"`
		Versions []struct {
			Name   string `yaml:"name"`
			Schema struct {
				OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
			} `yaml:"schema"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

// crdSchemas reads the CRD at path and returns one schema per version,
// keyed by its group/version/kind.
func crdSchemas(path string) (map[GVK]map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeschema: %w", err)
	}
	var crd crdDoc
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, fmt.Errorf("kubeschema: %s: %w", path, err)
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Spec.Names.Kind == "" {
		return nil, fmt.Errorf("kubeschema: %s is not a CustomResourceDefinition (kind %q)", path, crd.Kind)
	}
	out := map[GVK]map[string]any{}
	for _, v := range crd.Spec.Versions {
		if v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("kubeschema: %s: version %s has no openAPIV3Schema", path, v.Name)
		}
		gvk := GVK{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		s, err := CRDSchema(v.Schema.OpenAPIV3Schema, gvk)
		if err != nil {
			return nil, err
		}
		out[gvk] = s
	}
	return out, nil
}
