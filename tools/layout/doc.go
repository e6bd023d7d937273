// Package layout holds the repository's import rules, checked by its test (make
// lint runs it, and so does make test):
//
//   - what ships is cmd/arcflow and the packages it links; no package of the
//     simulated world (sim/), the developer tools (tools/) or the tests (test/)
//     is among them, under either set of release tags;
//   - internal/ holds only packages the shipped binary links;
//   - no product package imports sim/, tools/ or test/ (their tests may: the
//     fake GitHub is how they talk to GitHub);
//   - the deterministic workflows depend on no arcflow package that does I/O,
//     and link neither go-github nor client-go.
package layout
