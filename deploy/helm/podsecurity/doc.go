// Package podsecurity checks every pod the Helm chart renders, for every
// value set of deploy/helm/testvalues, against the "restricted" Pod
// Security Standard with Kubernetes' own evaluator
// (k8s.io/pod-security-admission/policy), as a namespace labelled
// pod-security.kubernetes.io/enforce=restricted would admit them.
//
// It is a module of its own so that the Kubernetes libraries stay out of
// the product's go.mod; `make test-helm` runs it.
package podsecurity
