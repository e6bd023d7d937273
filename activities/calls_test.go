package activities

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Workflows call activities by the names in package calls; the worker registers
// these four types, and Temporal names each activity after its method. A name
// with no method, or a method with no name, would fail only at run time.
func TestCallsNameEveryRegisteredActivity(t *testing.T) {
	var methods []string
	for _, v := range []any{&Kubernetes{}, &GitHub{}, &Workflows{}, &ScaleSets{}} {
		typ := reflect.TypeOf(v)
		for i := 0; i < typ.NumMethod(); i++ {
			methods = append(methods, typ.Method(i).Name)
		}
	}
	sort.Strings(methods)

	file, err := parser.ParseFile(token.NewFileSet(), "calls/names.go", nil, 0)
	require.NoError(t, err)
	var names []string
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			value := spec.(*ast.ValueSpec)
			name, err := strconv.Unquote(value.Values[0].(*ast.BasicLit).Value)
			require.NoError(t, err)
			require.Equal(t, value.Names[0].Name, name, "a constant in calls/names.go names its own activity")
			names = append(names, name)
		}
	}
	sort.Strings(names)
	require.NotEmpty(t, methods)
	require.Equal(t, methods, names)
}
