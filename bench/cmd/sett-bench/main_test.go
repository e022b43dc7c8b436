package main

import (
	"slices"
	"testing"
)

func TestParseLevels(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"10,1000,10000", []int{10, 1000, 10000}, true},
		{" 1, 10 ,100", []int{1, 10, 100}, true},
		{"5", []int{5}, true},
		{"10,10", nil, false},
		{"100,10", nil, false},
		{"0", nil, false},
		{"ten", nil, false},
		{"10,", nil, false},
	} {
		got, err := parseLevels(tc.in)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("parseLevels(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
