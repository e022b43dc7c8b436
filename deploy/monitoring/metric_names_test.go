package monitoring

import "strings"

// promqlKeywords are the words of PromQL that read like metric names:
// binary and set operators, grouping modifiers, aggregation operators
// (which may stand before "by (...)" rather than before their
// parenthesis) and the special numbers.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true, "inf": true, "nan": true,
}

// groupingKeywords take a parenthesised list of label names, which are
// no metrics.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL query selects, in order
// of first appearance: bare identifiers that are neither keywords nor
// functions, and __name__ matchers inside braces. Label matchers, ranges,
// strings, numbers, durations and grouping label lists are skipped.
//
// A scanner rather than Prometheus's own parser: the parser lives in the
// prometheus/prometheus module, whose dependency tree is many times
// Sett's, for a check this small; the table test in monitoring_test.go
// holds it to the forms the dashboard and the rules use.
func metricNames(q string) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
	isIdent := func(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
	skipSpace := func(i int) int {
		for i < len(q) && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r') {
			i++
		}
		return i
	}
	// skipString returns the index after the quoted string starting at i.
	skipString := func(i int) int {
		quote := q[i]
		for i++; i < len(q); i++ {
			if q[i] == '\\' && quote != '`' {
				i++
				continue
			}
			if q[i] == quote {
				return i + 1
			}
		}
		return i
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(i)
		case c == '[':
			// A range or subquery: durations and $variables only.
			for i < len(q) && q[i] != ']' {
				i++
			}
			i++
		case c == '{':
			// Label matchers; only __name__ names a metric.
			for i++; i < len(q) && q[i] != '}'; {
				switch {
				case q[i] == '"' || q[i] == '\'' || q[i] == '`':
					i = skipString(i)
				case strings.HasPrefix(q[i:], "__name__"):
					j := skipSpace(i + len("__name__"))
					if j < len(q) && q[j] == '=' {
						j = skipSpace(j + 1)
						if j < len(q) && (q[j] == '"' || q[j] == '\'') {
							end := skipString(j)
							add(q[j+1 : end-1])
							i = end
							continue
						}
					}
					i = j
				default:
					i++
				}
			}
			i++
		case c >= '0' && c <= '9' || c == '.':
			// A number or duration (0.5, 1e3, 5m, 0x1f).
			for i < len(q) && (isIdent(q[i]) || q[i] == '.') {
				i++
			}
		case c == '$':
			// A dashboard variable outside a selector.
			for i++; i < len(q) && isIdent(q[i]); i++ {
			}
		case isIdentStart(c):
			start := i
			for i < len(q) && isIdent(q[i]) {
				i++
			}
			word := q[start:i]
			next := skipSpace(i)
			switch {
			case groupingKeywords[word]:
				if next < len(q) && q[next] == '(' {
					for i = next; i < len(q) && q[i] != ')'; i++ {
					}
					i++
				}
			case promqlKeywords[word]:
			case next < len(q) && q[next] == '(':
				// A function call.
			default:
				add(word)
			}
		default:
			i++
		}
	}
	return names
}
