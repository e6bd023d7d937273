package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// TroubleshootingDoc holds the table of the reasons arcflow sets.
const TroubleshootingDoc = "docs/troubleshooting.md"

// reasonSources are the packages that set the reasons of status conditions
// and events: the worker's watchers, the activities, and the internal
// packages they call (whose constants name some of the reasons).
var reasonSources = []string{"worker/*.go", "activities/*.go", "activities/calls/*.go", "internal/*/*.go"}

// reasonRe is the form of a Kubernetes reason (UpperCamelCase); end reasons
// such as pod-failed and other strings in a Reason field are something else.
var reasonRe = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// CodeReasons reads the reasons that Go sources (path → text) give status
// conditions and events, with where each is first set (path:line). A reason
// is a string literal, or a constant of the sources (a constant defined by
// another one included), that the code
//   - puts in a field named Reason: a composite literal's Reason: (a
//     metav1.Condition, a corev1.Event, a struct that carries one to them) or
//     an assignment to x.Reason (c.Status, c.Reason = ..., "Throttled");
//   - passes as a string parameter named reason of a function of the sources
//     (setConditions, event, RecordEvent);
//   - returns from a function of the sources whose call is in one of those
//     places (ARCStatus.Reason(), conditionReason(...)).
//
// A local variable stands for every value its function assigns to it
// (eventType, reason := ..., "JobLost"; then reason = "JobRerun"). Reasons
// built at run time (PodFailed from pod-failed) are not found. The syntax
// tree, rather than a pattern over the text, is what tells a reason set from
// one compared with (c.Reason == "X") or merely mentioned.
func CodeReasons(sources map[string]string) (map[string]string, error) {
	type file struct {
		path string
		fset *token.FileSet
		f    *ast.File
	}
	// scoped is an expression and the local variables of the function it is in.
	type scoped struct {
		e      ast.Expr
		locals map[string][]ast.Expr
	}
	var files []file
	consts := map[string]ast.Expr{}  // "pkg.Name" → its value expression
	params := map[string]int{}       // function name → index of its reason parameter
	returns := map[string][]scoped{} // function name → the expressions it returns
	for _, path := range sortedKeys(sources) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, sources[path], 0)
		if err != nil {
			return nil, err
		}
		files = append(files, file{path, fset, f})
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							consts[f.Name.Name+"."+name.Name] = vs.Values[i]
						}
					}
				}
			case *ast.FuncDecl:
				if i := reasonParam(d.Type); i >= 0 {
					params[d.Name.Name] = i
				}
				if d.Body == nil {
					continue
				}
				locals := localValues(d.Body)
				ast.Inspect(d.Body, func(n ast.Node) bool {
					if _, ok := n.(*ast.FuncLit); ok {
						return false // a closure's returns are not the function's
					}
					if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
						returns[d.Name.Name] = append(returns[d.Name.Name], scoped{r.Results[0], locals})
					}
					return true
				})
			}
		}
	}

	// eval finds the strings an expression of package pkg can be: a literal, a
	// local variable's values, a constant (of pkg, or pkg2.Name of another
	// package of the sources), or what a function of the sources returns.
	// depth stops cycles.
	var eval func(e ast.Expr, pkg string, locals map[string][]ast.Expr, depth int) []string
	eval = func(e ast.Expr, pkg string, locals map[string][]ast.Expr, depth int) []string {
		if depth > 8 {
			return nil
		}
		var out []string
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, ok := stringLit(e); ok {
				out = append(out, s)
			}
		case *ast.ParenExpr:
			out = eval(e.X, pkg, locals, depth+1)
		case *ast.Ident:
			if vs, ok := locals[e.Name]; ok {
				for _, v := range vs {
					out = append(out, eval(v, pkg, locals, depth+1)...)
				}
			} else if v, ok := consts[pkg+"."+e.Name]; ok {
				out = eval(v, pkg, nil, depth+1)
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				if v, ok := consts[x.Name+"."+e.Sel.Name]; ok {
					out = eval(v, x.Name, nil, depth+1)
				}
			}
		case *ast.CallExpr:
			for _, r := range returns[funcName(e.Fun)] {
				out = append(out, eval(r.e, pkg, r.locals, depth+1)...)
			}
		}
		return out
	}

	found := map[string]string{}
	for _, fl := range files {
		pkg := fl.f.Name.Name
		for _, d := range fl.f.Decls {
			var locals map[string][]ast.Expr
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				locals = localValues(fn.Body)
			}
			add := func(e ast.Expr) {
				for _, s := range eval(e, pkg, locals, 0) {
					if _, seen := found[s]; !seen && reasonRe.MatchString(s) {
						found[s] = fl.path + ":" + strconv.Itoa(fl.fset.Position(e.Pos()).Line)
					}
				}
			}
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.KeyValueExpr:
					if key, ok := n.Key.(*ast.Ident); ok && key.Name == "Reason" {
						add(n.Value)
					}
				case *ast.AssignStmt:
					if len(n.Lhs) == len(n.Rhs) {
						for i, l := range n.Lhs {
							if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" {
								add(n.Rhs[i])
							}
						}
					}
				case *ast.CallExpr:
					if i, ok := params[funcName(n.Fun)]; ok && i < len(n.Args) {
						add(n.Args[i])
					}
				}
				return true
			})
		}
	}
	return found, nil
}

// localValues collects what a function body assigns to each local name
// (x := v, x = v, var x = v; one value per name on each side), so that
// `reason := "JobLost"` followed by RecordEvent(..., reason, ...) is found.
// Names are not scoped: two variables of one name in a function share values,
// which errs towards finding a reason, not missing one.
func localValues(body *ast.BlockStmt) map[string][]ast.Expr {
	locals := map[string][]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
						locals[id.Name] = append(locals[id.Name], n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) {
				for i, id := range n.Names {
					locals[id.Name] = append(locals[id.Name], n.Values[i])
				}
			}
		}
		return true
	})
	return locals
}

// reasonParam is the index of a function's string parameter named reason, or -1.
func reasonParam(t *ast.FuncType) int {
	i := 0
	for _, field := range t.Params.List {
		typ, _ := field.Type.(*ast.Ident)
		for _, name := range field.Names {
			if name.Name == "reason" && typ != nil && typ.Name == "string" {
				return i
			}
			i++
		}
		if len(field.Names) == 0 {
			i++
		}
	}
	return -1
}

// ReasonRows collects the reasons in the first column of d's tables whose
// first header cell is Reason, in code spans (`InvalidSpec`).
func ReasonRows(d *Doc) map[string]bool {
	rows := map[string]bool{}
	inTable := false
	for i, line := range d.Lines {
		if t := strings.TrimSpace(line); !strings.HasPrefix(t, "|") || d.Prose[i] == "" {
			inTable = false
			continue
		}
		cells := splitRow(line)
		if !inTable {
			inTable = strings.EqualFold(strings.TrimSpace(cells[0]), "reason")
			continue
		}
		for _, m := range codeCellRe.FindAllStringSubmatch(cells[0], -1) {
			rows[strings.TrimSpace(m[1])] = true
		}
	}
	return rows
}

// CheckReasonRows reports every reason of the code (reason → where it is
// set) that has no row in a Reason table of d.
func CheckReasonRows(d *Doc, code map[string]string) []Problem {
	rows := ReasonRows(d)
	var missing []string
	for reason := range code {
		if !rows[reason] {
			missing = append(missing, reason)
		}
	}
	sort.Strings(missing)
	var out []Problem
	for _, reason := range missing {
		out = append(out, Problem{File: d.Path, Msg: "reason " + reason + " (set at " + code[reason] + ") has no row in a table whose first column is Reason"})
	}
	return out
}
