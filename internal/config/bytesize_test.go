package config

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    ByteSize
		wantErr string // substring; "" means success
	}{
		{name: "plain bytes", in: "1048576", want: MiB},
		{name: "zero", in: "0", want: 0},
		{name: "explicit bytes unit", in: "512B", want: 512},
		{name: "KiB", in: "512KiB", want: 512 * 1024},
		{name: "MiB", in: "4MiB", want: 4 << 20},
		{name: "GiB", in: "1GiB", want: 1 << 30},
		{name: "TiB", in: "2TiB", want: 2 << 40},
		{name: "EiB", in: "7EiB", want: 7 << 60},
		{name: "decimal MB", in: "100MB", want: 100_000_000},
		{name: "decimal KB", in: "1KB", want: 1000},
		{name: "decimal GB", in: "3GB", want: 3_000_000_000},
		{name: "lower case unit", in: "4mib", want: 4 << 20},
		{name: "SI kB", in: "2kB", want: 2000},
		{name: "space before unit", in: "4 MiB", want: 4 << 20},
		{name: "surrounding spaces", in: "  4MiB ", want: 4 << 20},
		{name: "fraction that is whole bytes", in: "1.5GiB", want: 3 << 29},
		{name: "largest value", in: "9223372036854775807", want: math.MaxInt64},
		{name: "largest value with unit", in: "9223372036854775807B", want: math.MaxInt64},

		{name: "empty", in: "", wantErr: `"" is not a byte size`},
		{name: "words", in: "four megabytes", wantErr: `is not a byte size (use a number of bytes or a unit like 512KiB`},
		{name: "negative", in: "-1", wantErr: "must not be negative"},
		{name: "negative with unit", in: "-4MiB", wantErr: "must not be negative"},
		{name: "ambiguous M", in: "512M", wantErr: `ambiguous unit "M" (use MiB for powers of 1024 or MB for powers of 1000)`},
		{name: "ambiguous lower k", in: "4k", wantErr: `ambiguous unit "k" (use KiB`},
		{name: "unknown unit", in: "4MiBs", wantErr: `unknown unit "MiBs"`},
		{name: "bits", in: "4Mbit", wantErr: `unknown unit "Mbit"`},
		{name: "not whole bytes", in: "0.1KiB", wantErr: "not a whole number of bytes"},
		{name: "fractional bytes", in: "1.5", wantErr: "not a whole number of bytes"},
		{name: "overflow plain", in: "9223372036854775808", wantErr: "out of range"},
		{name: "overflow with unit", in: "8EiB", wantErr: "out of range"},
		{name: "overflow huge", in: "99999999999999999999999TB", wantErr: "out of range"},
		{name: "hex", in: "0x10", wantErr: "is not a byte size"},
		{name: "exponent", in: "1e6", wantErr: "is not a byte size"},
		{name: "leading dot", in: ".5MiB", wantErr: "is not a byte size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseByteSize(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseByteSize(%q) = %d, want error containing %q", tt.in, got, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseByteSize(%q) error = %q, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseByteSize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseByteSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestByteSizeString(t *testing.T) {
	tests := []struct {
		name string
		in   ByteSize
		want string
	}{
		{name: "zero", in: 0, want: "0B"},
		{name: "bytes", in: 1500, want: "1500B"},
		{name: "KiB", in: 512 * KiB, want: "512KiB"},
		{name: "MiB", in: MiB, want: "1MiB"},
		{name: "GiB", in: GiB, want: "1GiB"},
		{name: "decimal", in: 100 * MB, want: "100MB"},
		{name: "binary wins when smaller", in: 1000 * KiB, want: "1000KiB"},
		{name: "fraction of GiB", in: 1536 * MiB, want: "1536MiB"},
		{name: "max", in: math.MaxInt64, want: "9223372036854775807B"},
		{name: "negative", in: -5, want: "-5B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
			if tt.in < 0 {
				return
			}
			back, err := ParseByteSize(tt.want)
			if err != nil || back != tt.in {
				t.Fatalf("ParseByteSize(%q) = %d, %v; want %d (round trip)", tt.want, back, err, tt.in)
			}
		})
	}
}

func TestByteSizeYAML(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    ByteSize
		wantErr string
	}{
		{name: "integer", doc: "v: 2048", want: 2048},
		{name: "integer with underscores", doc: "v: 1_048_576", want: MiB},
		{name: "string with unit", doc: "v: 4MiB", want: 4 * MiB},
		{name: "quoted string", doc: `v: "100MB"`, want: 100 * MB},
		{name: "negative integer", doc: "v: -1", wantErr: "must not be negative"},
		{name: "integer overflow", doc: "v: 99999999999999999999", wantErr: "out of range"},
		{name: "float", doc: "v: 1.5", wantErr: "not a whole number of bytes"},
		{name: "list", doc: "v: [1]", wantErr: "expected a byte size (like 4MiB), got a list"},
		{name: "bad unit", doc: "v: 4 potatoes", wantErr: `unknown unit "potatoes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				V ByteSize `yaml:"v"`
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
			if got.V != tt.want {
				t.Fatalf("Unmarshal(%q) = %d, want %d", tt.doc, got.V, tt.want)
			}
		})
	}
}

func TestByteSizeMarshalRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   ByteSize
		want string
	}{
		{name: "MiB", in: 4 * MiB, want: "v: 4MiB\n"},
		{name: "bytes", in: 1500, want: "v: 1500B\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type doc struct {
				V ByteSize `yaml:"v"`
			}
			out, err := yaml.Marshal(doc{V: tt.in})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Fatalf("Marshal = %q, want %q", out, tt.want)
			}
			var back doc
			if err := yaml.Unmarshal(out, &back); err != nil || back.V != tt.in {
				t.Fatalf("Unmarshal(%q) = %d, %v; want %d", out, back.V, err, tt.in)
			}
			text, _ := tt.in.MarshalText()
			var fromText ByteSize
			if err := fromText.UnmarshalText(text); err != nil || fromText != tt.in {
				t.Fatalf("UnmarshalText(%q) = %d, %v; want %d", text, fromText, err, tt.in)
			}
		})
	}
}
