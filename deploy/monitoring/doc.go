// Package monitoring holds no code: it is where Sett's Grafana dashboard
// (sett-dashboard.json) and Prometheus alerting rules (sett-alerts.yml)
// live, and its tests check that every metric their queries name is one
// the orchestrator and the cub really export, and that every Sett series
// the daemons export appears on the dashboard.
package monitoring
