package monitoring

import (
	"sort"
	"strings"
)

// groupingKeywords take a parenthesized list of label names.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// aggregations may take their grouping clause before their argument.
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true, "limitk": true, "limit_ratio": true,
}

// keywords are PromQL words that are neither metric names nor functions.
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
}

// MetricNames are the metric names that a PromQL expression selects, sorted and
// without duplicates. It is a small lexer, not a parser: it skips strings, label
// matchers ({...}), ranges ([...]), numbers and durations, function names (a word
// before "("), grouping clauses (by (...), on (...), ...) and keywords, and keeps
// the remaining words. Grafana's variables ($__rate_interval, "$namespace") only
// appear where it skips.
func MetricNames(expr string) []string {
	seen := map[string]bool{}
	i, n := 0, len(expr)
	skipTo := func(open, close byte) { // i is at open; moves past the matching close
		depth := 0
		for ; i < n; i++ {
			switch c := expr[i]; {
			case c == '"' || c == '\'' || c == '`':
				i = skipString(expr, i) - 1
			case c == open:
				depth++
			case c == close:
				depth--
				if depth == 0 {
					i++
					return
				}
			}
		}
	}
	for i < n {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			skipTo('{', '}')
		case c == '[':
			skipTo('[', ']')
		case c >= '0' && c <= '9' || c == '.':
			for i < n && (isWordByte(expr[i]) || expr[i] == '.') {
				i++
			}
		case isWordStart(c):
			start := i
			for i < n && isWordByte(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := i
			for next < n && (expr[next] == ' ' || expr[next] == '\t' || expr[next] == '\n') {
				next++
			}
			switch {
			case groupingKeywords[strings.ToLower(word)]:
				if next < n && expr[next] == '(' {
					i = next
					skipTo('(', ')')
				}
			case keywords[strings.ToLower(word)]:
			case next < n && expr[next] == '(':
				// a function or an aggregation
			case aggregations[strings.ToLower(word)] && groupingKeywords[strings.ToLower(wordAt(expr, next))]:
				// sum by (le) (...)
			default:
				seen[word] = true
			}
		default:
			i++
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// wordAt is the word that starts at i, if any.
func wordAt(s string, i int) string {
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	return s[i:j]
}

// skipString returns the index after the string literal that starts at i.
func skipString(s string, i int) int {
	quote := s[i]
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if quote != '`' {
				i++
			}
		case quote:
			return i + 1
		}
	}
	return i
}

func isWordStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordByte(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

// Family is the metric family a sample name belongs to: a histogram's or a
// summary's _bucket, _count and _sum series are their family's.
func Family(name string, families map[string]bool) string {
	if families[name] {
		return name
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return base
		}
	}
	return name
}
