module github.com/settdev/sett/deploy/helm/podsecurity

go 1.26.0

require (
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	k8s.io/api v0.34.4 // indirect
	k8s.io/apimachinery v0.34.4 // indirect
	k8s.io/pod-security-admission v0.34.4 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
