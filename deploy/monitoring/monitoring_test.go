package monitoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/orchestrator"
)

// prometheusOwn are the series Prometheus itself writes for every target;
// a query may name them although no daemon exports them.
var prometheusOwn = map[string]bool{"up": true, "scrape_duration_seconds": true, "scrape_samples_scraped": true}

// exported returns the series names each daemon serves on /metrics, read
// from a scrape of the registry the daemon builds (observability.Server's
// standard registry with the daemon's own metrics on it), keyed by name
// with the family's type. A histogram family h yields h_bucket, h_sum and
// h_count, which is what a query can name.
func exported(t *testing.T) map[string]string {
	t.Helper()
	series := map[string]string{}
	for daemon, register := range map[string]func(*observability.Server){
		"orchestrator": func(s *observability.Server) { orchestrator.NewMetrics(s.Registry()) },
		"cub":          func(s *observability.Server) { cub.NewMetrics(s.Registry()) },
	} {
		srv := observability.NewServer("127.0.0.1:0")
		register(srv)
		var scrape bytes.Buffer
		if err := srv.Registry().WriteText(&scrape); err != nil {
			t.Fatalf("%s: scrape: %v", daemon, err)
		}
		sc := bufio.NewScanner(&scrape)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
				continue
			}
			name, typ := f[2], f[3]
			if typ == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					series[name+s] = typ
				}
				continue
			}
			series[name] = typ
		}
	}
	if len(series) < 20 {
		t.Fatalf("the daemons' registries export only %d series; the scrape was not read: %v", len(series), series)
	}
	return series
}

// dashboardQueries returns the expr of every target of every panel,
// nested panels of collapsed rows included, and of every query variable.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("sett-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Type    string   `json:"type"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"`
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Type string `json:"type"`
				// A string on datasource variables, an object on query ones.
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("sett-dashboard.json: %v", err)
	}
	var out []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("dashboard panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("dashboard panel %q has a target without expr", p.Title)
				}
				out = append(out, tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var query struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &query); err != nil {
			t.Fatalf("sett-dashboard.json: query variable: %v", err)
		}
		// label_values(metric, label): the metric is the first argument.
		q := query.Query
		if inner, ok := strings.CutPrefix(q, "label_values("); ok {
			metric, _, _ := strings.Cut(inner, ",")
			out = append(out, strings.TrimSpace(metric))
		} else {
			out = append(out, q)
		}
	}
	return out
}

// ruleQueries returns the expr of every rule in sett-alerts.yml.
func ruleQueries(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("sett-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("sett-alerts.yml: %v", err)
	}
	var out []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("alert %q has no expr", r.Alert)
			}
			out = append(out, r.Expr)
		}
	}
	if len(out) == 0 {
		t.Fatal("sett-alerts.yml holds no rules")
	}
	return out
}

func TestQueriesNameOnlyExportedMetrics(t *testing.T) {
	series := exported(t)
	for file, queries := range map[string][]string{
		"sett-dashboard.json": dashboardQueries(t),
		"sett-alerts.yml":     ruleQueries(t),
	} {
		for _, q := range queries {
			names := metricNames(q)
			if len(names) == 0 {
				t.Errorf("%s: query names no metric: %s", file, q)
			}
			for _, n := range names {
				if series[n] == "" && !prometheusOwn[n] {
					t.Errorf("%s: %s is not exported by the orchestrator or the cub (query: %s)", file, n, q)
				}
			}
		}
	}
}

// TestDashboardShowsEverySettMetric: a Sett series added to a daemon
// belongs on the dashboard too.
func TestDashboardShowsEverySettMetric(t *testing.T) {
	shown := map[string]bool{}
	for _, q := range dashboardQueries(t) {
		for _, n := range metricNames(q) {
			shown[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
		}
	}
	var missing []string
	for n, typ := range exported(t) {
		if !strings.HasPrefix(n, "sett_") {
			continue
		}
		base := n
		if typ == "histogram" {
			base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		}
		if !shown[base] {
			missing = append(missing, base)
		}
	}
	sort.Strings(missing)
	missing = dedupe(missing)
	if len(missing) > 0 {
		t.Errorf("sett-dashboard.json shows no panel for %s", strings.Join(missing, ", "))
	}
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"bare", "up", []string{"up"}},
		{"selector and range", `rate(sett_cub_tool_runs_total{job=~"$job",outcome!="ok"}[$__rate_interval])`, []string{"sett_cub_tool_runs_total"}},
		{"grouping labels are no metrics", `sum by (job, le) (rate(a_bucket[5m])) / ignoring(le) group_left(x) b`, []string{"a_bucket", "b"}},
		{"aggregation with trailing by", `sum(rate(a_total[5m])) by (status) > bool 0.5`, []string{"a_total"}},
		{"functions, numbers and keywords", `histogram_quantile(0.99, x_bucket) > 2 and absent(y) or z offset 5m unless w @ 100`, []string{"x_bucket", "y", "z", "w"}},
		{"strings with identifiers", `count_values("some name", m) + label_replace(n, "dst", "$1", "src", "(.*)")`, []string{"m", "n"}},
		{"name in braces", `{__name__="only_in_braces"}`, []string{"only_in_braces"}},
		{"subquery", `max_over_time(rate(c_total[1m])[30m:1m])`, []string{"c_total"}},
		{"colon in recording rule name", `job:requests:rate5m > 1e3`, []string{"job:requests:rate5m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := metricNames(tc.query); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("metricNames(%s) = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
}
