package console

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// diffRow is one line pair of a side-by-side diff; a zero line number
// means the side has no line there.
type diffRow struct {
	LNo, RNo int
	L, R     string
	Kind     string // same, del, add, change
}

// sideBySide diffs two texts line by line.
func sideBySide(a, b string) []diffRow {
	al, bl := lines(a), lines(b)
	var rows []diffRow
	for _, op := range difflib.NewMatcher(al, bl).GetOpCodes() {
		switch op.Tag {
		case 'e':
			for k := 0; k < op.I2-op.I1; k++ {
				rows = append(rows, diffRow{LNo: op.I1 + k + 1, RNo: op.J1 + k + 1, L: al[op.I1+k], R: bl[op.J1+k], Kind: "same"})
			}
		case 'd':
			for i := op.I1; i < op.I2; i++ {
				rows = append(rows, diffRow{LNo: i + 1, L: al[i], Kind: "del"})
			}
		case 'i':
			for j := op.J1; j < op.J2; j++ {
				rows = append(rows, diffRow{RNo: j + 1, R: bl[j], Kind: "add"})
			}
		case 'r':
			n := max(op.I2-op.I1, op.J2-op.J1)
			for k := 0; k < n; k++ {
				row := diffRow{Kind: "change"}
				if i := op.I1 + k; i < op.I2 {
					row.LNo, row.L = i+1, al[i]
				}
				if j := op.J1 + k; j < op.J2 {
					row.RNo, row.R = j+1, bl[j]
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// lines splits a text into lines without their newlines; an empty text
// has none.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
