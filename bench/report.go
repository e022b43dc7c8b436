package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the result of one harness run: where it ran, every figure and
// the breakdowns that explain them. WriteJSON stores it; WriteTable prints
// the one table `make bench` shows; WriteBenchfmt writes the samples as Go
// benchmark lines for benchstat.
type Report struct {
	Commit      string `json:"commit"`
	CommitShort string `json:"commit_short"`
	// Dirty is true when the work tree had uncommitted changes: the
	// figures are then of the commit plus those changes.
	Dirty     bool      `json:"dirty"`
	GoVersion string    `json:"go_version"`
	Machine   Machine   `json:"machine"`
	StartedAt time.Time `json:"started_at"`
	DurationS float64   `json:"duration_s"`
	Options   Options   `json:"options"`
	Figures   []Figure  `json:"figures"`
	// Breakdowns explain the figures: hop stages, round trips by process
	// and by request.
	Breakdowns []Breakdown `json:"breakdowns,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// Machine describes the host the figures were taken on.
type Machine struct {
	OS           string `json:"os"`
	Arch         string `json:"arch"`
	CPUs         int    `json:"cpus"`
	CPUModel     string `json:"cpu_model"`
	MemTotalMB   int    `json:"mem_total_mb"`
	Kernel       string `json:"kernel"`
	RedisVersion string `json:"redis_version"`
	// LoadAvgStart and LoadAvgEnd are /proc/loadavg around the run: the
	// machine is shared, so they say how noisy the figures may be.
	LoadAvgStart string `json:"loadavg_start"`
	LoadAvgEnd   string `json:"loadavg_end"`
}

// Breakdown is a small table that explains a figure.
type Breakdown struct {
	Name    string     `json:"name"`
	Title   string     `json:"title"`
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// Figure returns the figure called name and whether it exists.
func (r *Report) Figure(name string) (Figure, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// WriteTable prints the figures as one aligned table.
func (r *Report) WriteTable(w io.Writer) error {
	dirty := ""
	if r.Dirty {
		dirty = " (+ uncommitted changes)"
	}
	fmt.Fprintf(w, "Sett bench — commit %s%s, %s, %d CPUs (%s), redis %s, load %s → %s, %.0fs\n\n",
		r.CommitShort, dirty, r.GoVersion, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.RedisVersion,
		r.Machine.LoadAvgStart, r.Machine.LoadAvgEnd, r.DurationS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tUNIT\tN\tP50\tP90\tP99\tMIN\tMAX\tTARGET\tRESULT")
	for _, f := range r.Figures {
		target := f.Target
		if target == "" {
			target = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Title, f.Unit,
			strconv.Itoa(f.Samples)+" "+f.SampleOf, formatValue(f.P50), formatValue(f.P90), formatValue(f.P99),
			formatValue(f.Min), formatValue(f.Max), target, strings.ToUpper(string(f.Status)))
	}
	return tw.Flush()
}

// WriteBreakdowns prints the breakdowns, one small table each.
func (r *Report) WriteBreakdowns(w io.Writer) error {
	for _, b := range r.Breakdowns {
		fmt.Fprintf(w, "\n%s\n", b.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(b.Columns, "\t"))
		for _, row := range b.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "- "+n)
		}
	}
	return nil
}

// BaseName is the file name, without extension, the results are stored
// under: <UTC start time>-<short commit>.
func (r *Report) BaseName() string {
	return r.StartedAt.UTC().Format("20060102T150405Z") + "-" + r.CommitShort
}

// WriteFiles stores the report as <dir>/<BaseName>.json and its samples as
// <dir>/<BaseName>.txt (Go benchmark format); it returns both paths.
func (r *Report) WriteFiles(dir string) (jsonPath, benchPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("bench: results dir: %w", err)
	}
	jsonPath = filepath.Join(dir, r.BaseName()+".json")
	benchPath = filepath.Join(dir, r.BaseName()+".txt")
	body, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("bench: encode report: %w", err)
	}
	if err := os.WriteFile(jsonPath, append(body, '\n'), 0o644); err != nil {
		return "", "", fmt.Errorf("bench: write report: %w", err)
	}
	f, err := os.Create(benchPath)
	if err != nil {
		return "", "", fmt.Errorf("bench: write benchmark lines: %w", err)
	}
	defer f.Close()
	if err := r.WriteBenchfmt(f); err != nil {
		return "", "", err
	}
	return jsonPath, benchPath, f.Close()
}

// WriteBenchfmt writes every sample as a Go benchmark result line
// ("BenchmarkHop/agents=1 1 4123456 ns/op"), after configuration lines,
// so that `benchstat old.txt new.txt` compares two runs. Millisecond
// figures are written in ns/op; others in their own unit.
func (r *Report) WriteBenchfmt(w io.Writer) error {
	// Only keys two runs share: a key that differs (a commit id) would make
	// benchstat put the runs in separate tables instead of comparing them.
	// The file name and the JSON carry the commit.
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/settdev/sett/bench\ncpu: %s\n",
		r.Machine.OS, r.Machine.Arch, r.Machine.CPUModel)
	for _, f := range r.Figures {
		name, unit, scale := benchName(f)
		for _, v := range f.Values {
			if _, err := fmt.Fprintf(w, "%s 1 %s %s\n", name, strconv.FormatFloat(v*scale, 'g', 10, 64), unit); err != nil {
				return err
			}
		}
	}
	return nil
}

// benchName maps a figure to a benchmark name (Benchmark + CamelCase of
// its name, with the CPU count suffix Go prints) and its unit.
func benchName(f Figure) (name, unit string, scale float64) {
	var b strings.Builder
	b.WriteString("Benchmark")
	for _, part := range strings.Split(f.Name, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	unit, scale = strings.ReplaceAll(f.Unit, " ", "-"), 1
	if f.Unit == "ms" {
		unit, scale = "ns/op", 1e6
	}
	return b.String(), unit, scale
}
