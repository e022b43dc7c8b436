package config

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Duration
		wantErr string
	}{
		{name: "seconds", in: "5s", want: 5 * time.Second},
		{name: "minutes", in: "10m", want: 10 * time.Minute},
		{name: "hours and minutes", in: "1h30m", want: 90 * time.Minute},
		{name: "milliseconds", in: "250ms", want: 250 * time.Millisecond},
		{name: "fraction", in: "1.5s", want: 1500 * time.Millisecond},
		{name: "bare zero", in: "0", want: 0},
		{name: "surrounding spaces", in: " 5s ", want: 5 * time.Second},
		{name: "negative parses (Validate rejects it)", in: "-5s", want: -5 * time.Second},

		{name: "words", in: "5 seconds", wantErr: `"5 seconds" is not a duration (use Go syntax like 5s, 2m, 1h)`},
		{name: "empty", in: "", wantErr: `"" is not a duration`},
		{name: "missing unit", in: "30", wantErr: "30 is not a duration: add a unit (use Go syntax like 30s, 30m, 30h)"},
		{name: "days are not a Go unit", in: "1d", wantErr: `"1d" is not a duration`},
		{name: "overflow", in: "9999999999h", wantErr: `"9999999999h" is out of range`},
		{name: "overflow nanoseconds", in: "9223372036854775808ns", wantErr: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseDuration(%q) = %v, want error containing %q", tt.in, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDuration(%q) error = %q, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDuration(%q): %v", tt.in, err)
			}
			if got.Std() != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, want %v", tt.in, got.Std(), tt.want)
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		name string
		in   time.Duration
		want string
	}{
		{name: "zero", in: 0, want: "0s"},
		{name: "seconds", in: 5 * time.Second, want: "5s"},
		{name: "minutes", in: 10 * time.Minute, want: "10m"},
		{name: "hour", in: time.Hour, want: "1h"},
		{name: "hour and minutes", in: 90 * time.Minute, want: "1h30m"},
		{name: "hour and seconds", in: time.Hour + 5*time.Second, want: "1h0m5s"},
		{name: "minutes and seconds", in: 70 * time.Second, want: "1m10s"},
		{name: "milliseconds", in: 250 * time.Millisecond, want: "250ms"},
		{name: "ten hours ten minutes", in: 10*time.Hour + 10*time.Minute, want: "10h10m"},
		{name: "negative hour", in: -time.Hour, want: "-1h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Duration(tt.in)
			if got := d.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			back, err := ParseDuration(tt.want)
			if err != nil || back != d {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v (round trip)", tt.want, back, err, tt.in)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    time.Duration
		wantErr string
	}{
		{name: "string", doc: "v: 1h30m", want: 90 * time.Minute},
		{name: "quoted", doc: `v: "5s"`, want: 5 * time.Second},
		{name: "integer without unit", doc: "v: 30", wantErr: "add a unit"},
		{name: "words", doc: "v: 5 seconds", wantErr: "is not a duration"},
		{name: "mapping", doc: "v: {s: 5}", wantErr: "expected a duration (like 5s, 2m, 1h), got a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				V Duration `yaml:"v"`
			}
			err := yaml.Unmarshal([]byte(tt.doc), &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Unmarshal(%q) error = %v, want it to contain %q", tt.doc, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal(%q): %v", tt.doc, err)
			}
			if got.V.Std() != tt.want {
				t.Fatalf("Unmarshal(%q) = %v, want %v", tt.doc, got.V, tt.want)
			}
		})
	}
}

func TestDurationMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   Duration
		want string
	}{
		{name: "compact", in: Duration(90 * time.Minute), want: "v: 1h30m\n"},
		{name: "seconds", in: Duration(5 * time.Second), want: "v: 5s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type doc struct {
				V Duration `yaml:"v"`
			}
			out, err := yaml.Marshal(doc{V: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Fatalf("Marshal = %q, want %q", out, tt.want)
			}
			text, _ := tt.in.MarshalText()
			var back Duration
			if err := back.UnmarshalText(text); err != nil || back != tt.in {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, tt.in)
			}
		})
	}
}
