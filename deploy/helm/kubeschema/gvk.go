package main

import "strings"

// GVK is one group/version/kind a definition serves, as swagger's
// x-kubernetes-group-version-kind lists it. Group is empty for the core
// API ("v1").
type GVK struct {
	Group, Version, Kind string
}

// FileName is the name kubeconform looks for under a
// -schema-location DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json: the
// lower-case kind, then the first label of the group (none for core), then
// the version, e.g. deployment-apps-v1.json, service-v1.json.
func (g GVK) FileName() string {
	suffix := "-" + strings.ToLower(g.Version)
	if g.Group != "" {
		suffix = "-" + strings.ToLower(strings.Split(g.Group, ".")[0]) + suffix
	}
	return strings.ToLower(g.Kind) + suffix + ".json"
}
