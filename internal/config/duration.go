package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written in Go syntax in sett.yml: "5s",
// "10m", "1h30m", "250ms". A bare number is refused (except 0), because
// "30" could mean seconds or minutes. The zero value is 0s.
type Duration time.Duration

// ParseDuration parses s in Go syntax (time.ParseDuration) with a message
// meant for people editing sett.yml when it cannot.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		if isPlainNumber(t) {
			return 0, fmt.Errorf("%s is not a duration: add a unit (use Go syntax like %ss, %sm, %sh)", t, t, t, t)
		}
		if durationSyntax.MatchString(t) {
			// Well-formed but rejected: time.ParseDuration only does that
			// when the value does not fit in an int64 of nanoseconds.
			return 0, fmt.Errorf("%q is out of range (the longest duration is about 2562047h)", s)
		}
		return 0, fmt.Errorf("%q is not a duration (use Go syntax like 5s, 2m, 1h)", s)
	}
	return Duration(d), nil
}

// durationSyntax matches what time.ParseDuration accepts, ignoring range.
var durationSyntax = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// isPlainNumber reports whether s is a decimal number without a unit.
func isPlainNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	dot := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return true
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String renders d in Go syntax without zero trailing units: "1h30m"
// rather than "1h30m0s", "1h" rather than "1h0m0s". ParseDuration reads it
// back to the same value.
func (d Duration) String() string {
	s := time.Duration(d).String()
	// time.Duration.String always spells out minutes and seconds once the
	// value reaches them; drop the ones that are zero.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// UnmarshalYAML decodes a scalar in Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected a duration (like 5s, 2m, 1h), got %s", describeNode(n))
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML encodes d as its String.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalText decodes Go duration syntax, for flags and JSON.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := ParseDuration(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalText encodes d as its String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
