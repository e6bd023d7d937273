package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// Metric is a Prometheus metric family the code exports.
type Metric struct {
	Labels []string
	// Histogram families expose _bucket (with le), _sum and _count series.
	Histogram bool
}

// CodeMetrics reads the metric families that Go sources (path → text)
// register with client_golang: an *Opts literal with a literal Name passed to
// a constructor (the label list its second argument), and NewDesc("name",
// help, labels, ...). A label list is a []string literal or a package-level
// variable holding one. Names built at run time (the Temporal SDK's) are not
// here; see SDKMetricNames.
func CodeMetrics(sources map[string]string) (map[string]Metric, error) {
	out := map[string]Metric{}
	for _, path := range sortedKeys(sources) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, sources[path], 0)
		if err != nil {
			return nil, err
		}
		vars := stringSliceVars(f)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			labelsAt := func(i int) []string {
				if i < len(call.Args) {
					return stringSlice(call.Args[i], vars)
				}
				return nil
			}
			if funcName(call.Fun) == "NewDesc" {
				if name, ok := stringLit(call.Args[0]); ok {
					out[name] = Metric{Labels: labelsAt(2)}
				}
				return true
			}
			opts, ok := call.Args[0].(*ast.CompositeLit)
			if !ok || !strings.HasPrefix(funcName(call.Fun), "New") {
				return true
			}
			typ := funcName(opts.Type)
			if !strings.HasSuffix(typ, "Opts") {
				return true
			}
			for _, e := range opts.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "Name" {
					if name, ok := stringLit(kv.Value); ok {
						out[name] = Metric{Labels: labelsAt(1), Histogram: typ == "HistogramOpts"}
					}
				}
			}
			return true
		})
	}
	return out, nil
}

// funcName is the last identifier of an expression: NewDesc of
// prometheus.NewDesc, HistogramOpts of prometheus.HistogramOpts.
func funcName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// stringSlice evaluates a []string{"a", "b"} literal, or a variable of vars.
func stringSlice(e ast.Expr, vars map[string][]string) []string {
	if id, ok := e.(*ast.Ident); ok {
		return vars[id.Name]
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, elt := range lit.Elts {
		if s, ok := stringLit(elt); ok {
			out = append(out, s)
		}
	}
	return out
}

// stringSliceVars collects a file's package-level []string literals by name.
func stringSliceVars(f *ast.File) map[string][]string {
	vars := map[string][]string{}
	for _, d := range f.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if s := stringSlice(vs.Values[i], nil); s != nil {
						vars[name.Name] = s
					}
				}
			}
		}
	}
	return vars
}

// SDKMetricNames evaluates the string constants of the Temporal SDK's metric
// names file (internal/common/metrics/constants.go): constants built from
// literals and earlier constants with +. It returns those that start with
// "temporal_", the names the SDK hands its MetricsHandler, sorted.
func SDKMetricNames(src string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "constants.go", src, 0)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	var eval func(ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			return stringLit(e)
		case *ast.Ident:
			v, ok := values[e.Name]
			return v, ok
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.BinaryExpr:
			if e.Op != token.ADD {
				return "", false
			}
			x, okx := eval(e.X)
			y, oky := eval(e.Y)
			return x + y, okx && oky
		}
		return "", false
	}
	var names []string
	for _, d := range f.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				v, ok := eval(vs.Values[i])
				if !ok {
					continue
				}
				values[name.Name] = v
				if strings.HasPrefix(v, "temporal_") && v != "temporal_" {
					names = append(names, v)
				}
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no temporal_ metric names in the SDK's constants")
	}
	sort.Strings(names)
	return names, nil
}

// SDKTimer reports whether the SDK records a metric name as a timer: every
// timer constant of the SDK ends in _latency (WorkflowTaskScheduleToStartLatency,
// TemporalRequestLatency, ...), and nothing else does.
func SDKTimer(name string) bool { return strings.HasSuffix(name, "_latency") }
