package config

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a number of bytes. In sett.yml it is written as a plain
// integer (bytes) or as a number with a unit: binary (KiB, MiB, GiB, TiB,
// PiB, EiB: powers of 1024) or decimal (KB, MB, GB, TB, PB, EB: powers of
// 1000), as in "512KiB", "4MiB", "1.5GiB" or "100MB". Units are
// case-insensitive; a space between number and unit is allowed. The zero
// value is 0 bytes.
type ByteSize int64

// Binary byte size units.
const (
	Byte ByteSize = 1 << (10 * iota)
	KiB
	MiB
	GiB
	TiB
	PiB
	EiB
)

// Decimal byte size units.
const (
	KB ByteSize = 1000
	MB ByteSize = 1000 * KB
	GB ByteSize = 1000 * MB
	TB ByteSize = 1000 * GB
	PB ByteSize = 1000 * TB
	EB ByteSize = 1000 * PB
)

// byteUnits maps each unit, lower-cased, to its size.
var byteUnits = map[string]ByteSize{
	"b":   Byte,
	"kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB, "pib": PiB, "eib": EiB,
	"kb": KB, "mb": MB, "gb": GB, "tb": TB, "pb": PB, "eb": EB,
}

// byteSizeSyntax splits "1.5 GiB" into number and unit.
var byteSizeSyntax = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

const byteSizeHint = "use a number of bytes or a unit like 512KiB, 4MiB, 1GiB or 100MB"

// ParseByteSize parses a size as described on ByteSize. Negative sizes,
// unknown or ambiguous units ("4M": MiB or MB?), sizes that are not a whole
// number of bytes ("0.1KiB") and sizes beyond the int64 range are errors.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%q is not a byte size: it must not be negative", s)
	}
	m := byteSizeSyntax.FindStringSubmatch(t)
	if m == nil {
		return 0, fmt.Errorf("%q is not a byte size (%s)", s, byteSizeHint)
	}
	num, unit := m[1], m[2]
	mult := Byte
	if unit != "" {
		u, ok := byteUnits[strings.ToLower(unit)]
		if !ok {
			if len(unit) == 1 && strings.ContainsRune("kKmMgGtTpPeE", rune(unit[0])) {
				up := strings.ToUpper(unit)
				return 0, fmt.Errorf("%q has an ambiguous unit %q (use %siB for powers of 1024 or %sB for powers of 1000)", s, unit, up, up)
			}
			return 0, fmt.Errorf("%q has an unknown unit %q (%s)", s, unit, byteSizeHint)
		}
		mult = u
	}
	// Exact rational arithmetic: "1.5GiB" is exactly 1610612736 bytes, and
	// no float rounding can turn an overflow into a plausible value.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("%q is not a byte size (%s)", s, byteSizeHint)
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(mult)))
	if !r.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q is out of range (the largest size is %d bytes, about 8EiB)", s, int64(math.MaxInt64))
	}
	return ByteSize(r.Num().Int64()), nil
}

// Int64 returns b as an int64.
func (b ByteSize) Int64() int64 { return int64(b) }

// String renders b with the unit that gives the smallest whole number,
// preferring binary units: 1048576 is "1MiB", 100000000 is "100MB", 1500 is
// "1500B". ParseByteSize reads it back to the same value.
func (b ByteSize) String() string {
	if b == 0 {
		return "0B"
	}
	if b < 0 {
		// Not a valid size, but render it faithfully for messages. The
		// special case avoids negating math.MinInt64.
		return strconv.FormatInt(int64(b), 10) + "B"
	}
	type unit struct {
		name string
		size ByteSize
	}
	units := []unit{
		{"EiB", EiB}, {"EB", EB}, {"PiB", PiB}, {"PB", PB}, {"TiB", TiB}, {"TB", TB},
		{"GiB", GiB}, {"GB", GB}, {"MiB", MiB}, {"MB", MB}, {"KiB", KiB}, {"KB", KB},
	}
	best := unit{"B", Byte}
	for _, u := range units {
		if b%u.size == 0 && b/u.size < b/best.size {
			best = u
		}
	}
	return strconv.FormatInt(int64(b/best.size), 10) + best.name
}

// UnmarshalYAML decodes an integer (bytes) or a string with a unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected a byte size (like 4MiB), got %s", describeNode(n))
	}
	if n.Tag == "!!int" {
		var v int64
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("%s is out of range (the largest size is %d bytes, about 8EiB)", n.Value, int64(math.MaxInt64))
		}
		if v < 0 {
			return fmt.Errorf("%s is not a byte size: it must not be negative", n.Value)
		}
		*b = ByteSize(v)
		return nil
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalYAML encodes b as its String.
func (b ByteSize) MarshalYAML() (any, error) { return b.String(), nil }

// UnmarshalText decodes a size as described on ByteSize, for flags and
// JSON.
func (b *ByteSize) UnmarshalText(text []byte) error {
	v, err := ParseByteSize(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalText encodes b as its String.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }
