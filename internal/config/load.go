package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DefaultFilename is the conventional name of the configuration file, and
// the name Parse uses in messages when it is given none.
const DefaultFilename = "sett.yml"

// Load reads the file at path and returns what Parse returns for it, with
// path as the file name in messages. A file that cannot be read gives the
// *fs.PathError from os.ReadFile, wrapped (errors.Is(err, fs.ErrNotExist)
// works).
func Load(path string) (*Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes data as sett.yml, applies defaults and validates the
// result. filename is used only in messages ("" means DefaultFilename).
//
// It returns the Config and its warnings (settings that are valid but
// probably unintended, each a full sentence with its location), or an
// error: ErrEmpty, ErrMultipleDocuments, ErrSyntax (wrapped), or a
// *ValidationError listing every unknown key, wrong type and duplicate key
// (ErrUnknownKey, ErrType) or, once the file decodes, every broken rule
// (ErrInvalid). Parse does not read the environment; see ApplyEnv.
func Parse(data []byte, filename string) (*Config, []string, error) {
	if filename == "" {
		filename = DefaultFilename
	}
	root, err := parseDocument(data, filename)
	if err != nil {
		return nil, nil, err
	}

	src := newSource(filename)
	if root.Kind != yaml.MappingNode {
		return nil, nil, &ValidationError{Errors: []FieldError{{
			File: filename, Line: root.Line, Err: ErrType,
			Message: "the top level must be a mapping of keys (version, agents, ...), got " + describeNode(root),
		}}}
	}
	w := nodeWalker{src: src}
	w.walk(root, reflect.TypeFor[Config](), "")
	if len(w.errs) > 0 {
		return nil, nil, &ValidationError{Errors: w.errs}
	}

	// The walk has already checked every key and type; decoding with
	// KnownFields(true) as well keeps yaml.v3's own strictness as a
	// backstop should the walk and the types ever drift apart.
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrType, filename, err)
	}
	cfg.src = src
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	return &cfg, cfg.Warnings(), nil
}

// parseDocument returns the content node of the single YAML document in
// data.
func parseDocument(data []byte, filename string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s has no settings (start from sett.yml.example)", ErrEmpty, filename)
		}
		return nil, syntaxError(filename, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(filename, err)
	default:
		return nil, fmt.Errorf("%w: %s:%d: a second document starts here (remove the \"---\"; sett.yml holds one document)",
			ErrMultipleDocuments, filename, next.Line)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, fmt.Errorf("%w: %s has no settings (start from sett.yml.example)", ErrEmpty, filename)
	}
	return doc.Content[0], nil
}

// yamlLineError matches yaml.v3's "yaml: line N: message".
var yamlLineError = regexp.MustCompile(`^yaml: line ([0-9]+): (.*)$`)

// syntaxError rewords a yaml.v3 parse error as "file:line: message".
func syntaxError(filename string, err error) error {
	msg := err.Error()
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, filename, line, m[2])
	}
	return fmt.Errorf("%w: %s: %s", ErrSyntax, filename, strings.TrimPrefix(msg, "yaml: "))
}
