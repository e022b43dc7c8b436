// Package charttest holds the tests of the Helm chart that kubeconform
// cannot make: they render deploy/helm/sett with helm (bin/tools/helm,
// installed by mk/helm.mk) and run what it renders, such as the bundled
// Redis's configuration and ACL users on a real redis-server.
package charttest
