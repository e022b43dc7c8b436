// Command kubeschema writes the JSON schemas kubeconform validates the Helm
// chart's manifests against, from the Kubernetes API's own swagger.json.
//
// kubeconform fetches its schemas from GitHub by default, which CI and
// air-gapped machines cannot reach; the Go module proxy they do reach serves
// k8s.io/kubernetes, whose tree carries api/openapi-spec/swagger.json. So
// `make test-helm` runs this command once per Kubernetes version and points
// kubeconform at the result (-schema-location DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json).
//
// Usage:
//
//	go run ./deploy/helm/kubeschema -k8s v1.34.4 -out bin/tools/kubeschema/v1.34.4
//	go run ./deploy/helm/kubeschema -swagger path/to/swagger.json -out DIR
//	... -crd github.com/prometheus-operator/prometheus-operator@v0.85.0:example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
//
// CustomResourceDefinitions (-crd) come the same way, from a Go module that
// carries them: prometheus-operator's gives the ServiceMonitor schema.
//
// The output directory is written whole or not at all (built aside, then
// renamed), and a run whose directory already exists returns at once.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("kubeschema", flag.ContinueOnError)
	k8s := fs.String("k8s", "", "k8s.io/kubernetes module version whose swagger.json to convert (e.g. v1.34.4)")
	swagger := fs.String("swagger", "", "a swagger.json to convert instead of the module's")
	out := fs.String("out", "", "directory to write <kind>-<group>-<version>.json into (required)")
	var crds crdFlag
	fs.Var(&crds, "crd", "MODULE@VERSION:PATH of a CustomResourceDefinition in a Go module to convert too (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || (*k8s == "") == (*swagger == "") {
		return errors.New("kubeschema: give -out and exactly one of -k8s VERSION and -swagger FILE")
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(stdout, "kubeschema: %s exists, nothing to do\n", *out)
		return nil
	}
	path := *swagger
	if *k8s != "" {
		dir, err := moduleDir("k8s.io/kubernetes@" + *k8s)
		if err != nil {
			return err
		}
		path = filepath.Join(dir, "api", "openapi-spec", "swagger.json")
	}
	var crdPaths []string
	for _, c := range crds {
		mod, file, _ := strings.Cut(c, ":")
		dir, err := moduleDir(mod)
		if err != nil {
			return err
		}
		crdPaths = append(crdPaths, filepath.Join(dir, filepath.FromSlash(file)))
	}
	n, err := writeSchemas(path, crdPaths, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kubeschema: %d schemas from %s in %s\n", n, path, *out)
	return nil
}

// moduleDir downloads module@version through the Go module proxy (or
// finds it in the module cache) and returns its directory.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	// Outside any module: the download must not read or touch go.mod.
	cmd.Dir = os.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var res struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr == nil && res.Error != "" {
		return "", fmt.Errorf("kubeschema: go mod download %s: %s (is the version right? `go list -m -versions k8s.io/kubernetes` lists them)", modVersion, res.Error)
	}
	if err != nil || res.Dir == "" {
		return "", fmt.Errorf("kubeschema: go mod download %s: %v: %s", modVersion, err, stderr.String())
	}
	return res.Dir, nil
}

// writeSchemas converts every kind of the swagger document at path, and
// every version of the CRDs at crdPaths, into dir, and returns how many
// files it wrote.
func writeSchemas(path string, crdPaths []string, dir string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("kubeschema: %w", err)
	}
	var doc struct {
		Definitions map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, fmt.Errorf("kubeschema: %s is not a swagger document: %w", path, err)
	}
	if len(doc.Definitions) == 0 {
		return 0, fmt.Errorf("kubeschema: %s has no definitions", path)
	}
	conv := NewConverter(doc.Definitions)
	kinds, defOf := conv.Kinds()
	schemas := make(map[GVK]map[string]any, len(kinds))
	for _, gvk := range kinds {
		s, err := conv.Schema(defOf[gvk], gvk)
		if err != nil {
			return 0, err
		}
		schemas[gvk] = s
	}
	for _, p := range crdPaths {
		crd, err := crdSchemas(p)
		if err != nil {
			return 0, err
		}
		for gvk, s := range crd {
			if _, dup := schemas[gvk]; dup {
				return 0, fmt.Errorf("kubeschema: %s redefines %v", p, gvk)
			}
			kinds = append(kinds, gvk)
			schemas[gvk] = s
		}
	}

	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return 0, fmt.Errorf("kubeschema: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return 0, fmt.Errorf("kubeschema: %w", err)
	}
	defer os.RemoveAll(tmp)
	written := map[string]GVK{}
	for _, gvk := range kinds {
		name := gvk.FileName()
		if prev, dup := written[name]; dup {
			// Two groups sharing a first label would overwrite
			// each other's file: kubeconform's layout cannot tell
			// them apart, so say so rather than guess.
			return 0, fmt.Errorf("kubeschema: %v and %v both map to %s", prev, gvk, name)
		}
		written[name] = gvk
		b, err := json.Marshal(schemas[gvk])
		if err != nil {
			return 0, fmt.Errorf("kubeschema: %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return 0, fmt.Errorf("kubeschema: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return 0, fmt.Errorf("kubeschema: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, fmt.Errorf("kubeschema: %w", err)
	}
	return len(kinds), nil
}
