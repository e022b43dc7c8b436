package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	return &Report{
		Commit: "0123456789abcdef", CommitShort: "0123456", GoVersion: "go1.26.8",
		Machine:   Machine{OS: "linux", Arch: "amd64", CPUs: 2, CPUModel: "Test CPU"},
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Figures: []Figure{
			NewFigure("hop_1_agent", "hop overhead, 1 agent", "ms", "hops", []float64{5.5, 6.5}, "p50 ≤ 5 ms", Check{Stat: StatP50, Value: 5}),
			NewFigure("throughput_200_goals", "throughput", "claims/s", "rounds", []float64{320}, "≥ 300", Check{Stat: StatP50, AtLeast: true, Value: 300}),
			NewFigure("idle_cpu_cub", "cub idle CPU", "% of a core", "cubs", []float64{0.02}, ""),
		},
	}
}

func TestWriteBenchfmt(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteBenchfmt(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"goos: linux\n", "cpu: Test CPU\n",
		"BenchmarkHop1Agent 1 5500000 ns/op\n", "BenchmarkHop1Agent 1 6500000 ns/op\n",
		"BenchmarkThroughput200Goals 1 320 claims/s\n",
		"BenchmarkIdleCpuCub 1 0.02 %-of-a-core\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("benchmark lines lack %q:\n%s", want, out)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// Title, blank line, header, one row per figure.
	if len(lines) != 3+3 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"MISS", "PASS", "INFO"} {
		row := lines[3+i]
		if !strings.HasSuffix(strings.TrimSpace(row), want) {
			t.Errorf("row %q does not end with %s", row, want)
		}
	}
	if !strings.Contains(lines[3], "2 hops") || !strings.Contains(lines[3], "6.500") {
		t.Errorf("row %q lacks the sample count or p90", lines[3])
	}
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	rep := sampleReport()
	jsonPath, benchPath, err := rep.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := dir + "/20260102T030405Z-0123456.json"; jsonPath != want {
		t.Errorf("JSON at %s, want %s", jsonPath, want)
	}
	body, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if back.Commit != rep.Commit || len(back.Figures) != 3 || back.Figures[0].P90 != 6.5 || back.Figures[0].Status != StatusMiss {
		t.Fatalf("report read back as %+v", back)
	}
	for _, key := range []string{`"name"`, `"unit"`, `"samples"`, `"p50"`, `"p90"`, `"p99"`, `"min"`, `"max"`, `"target"`, `"status"`, `"go_version"`, `"machine"`} {
		if !bytes.Contains(body, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if b, err := os.ReadFile(benchPath); err != nil || !bytes.Contains(b, []byte("BenchmarkHop1Agent")) {
		t.Fatalf("benchmark file %s: %v\n%s", benchPath, err, b)
	}
}
