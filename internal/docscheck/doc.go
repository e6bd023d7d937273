// Package docscheck keeps arcflow's Markdown honest. make lint runs its test
// TestRepositoryDocs, which checks, for README.md, docs/ and the chart's README:
//
//   - every relative link, and every #anchor in one, resolves (links to this
//     repository's GitHub URLs too), and every alert's runbook_url names a
//     heading of docs/operations.md;
//   - every flag that `arcflow <command> --help` prints is a row of
//     docs/configuration.md with the same default, and every documented flag
//     exists for the commands its row names; every environment variable the
//     code reads, and every arcflow.dev/ annotation of the API, is documented,
//     and nothing documented is unknown to the code;
//   - every command block is run by a test or checked: `arcflow` lines against
//     the command's --help, `make` lines against the Makefile's targets, `go`
//     lines against the packages; anything else is marked
//     <!-- needs a real cluster -->; every ARC manifest is a file under
//     deploy/examples (<!-- example: path -->), which a test applies;
//   - the chart's README is what helm-docs generates from values.yaml;
//   - no line names a path on the machine that wrote it (/root/, /home/, ...).
//
// Each check is a function over file contents, unit-tested on small inputs.
package docscheck
