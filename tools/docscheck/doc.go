// Package docscheck keeps arcflow's Markdown honest. make lint runs its test
// TestRepositoryDocs, which checks, for README.md, docs/ and the chart's README:
//
//   - every relative link, and every #anchor in one, resolves (links to this
//     repository's GitHub URLs too), and every alert's runbook_url names a
//     heading of docs/operations.md;
//   - every flag that `arcflow <command> --help` prints is a row of
//     docs/configuration.md with the same default, and every documented flag
//     exists for the commands its row names; every environment variable the
//     code reads, every arcflow.dev/ label and annotation of the code, and
//     every printer column of the API is documented there, and nothing
//     documented is unknown to the code;
//   - every arcflow.dev/ name, anywhere in a page (code included), is one the
//     code has;
//   - every flag a page's prose names in a code span (`--reconcile-period`)
//     is a flag of an arcflow command or of the benchmark harness;
//   - every metric name that starts with arcflow_ or temporal_ is a series
//     the code exports: arcflow's from its client_golang registrations, the
//     Temporal SDK's as arcflow's MetricsHandler exports them (timers in
//     seconds, with a _seconds suffix); labels named in braces after a metric,
//     name{label} or name{label="v"}, are the family's own or a scrape's; the
//     metrics table of docs/operations.md has a row per arcflow_ family and
//     lists all of a family's labels where it lists any;
//   - every command block is run by a test or checked: `arcflow` lines against
//     the command's --help, `make` lines against the Makefile's targets, `go`
//     lines against the packages; anything else is marked
//     <!-- needs a real cluster -->; every ARC manifest is a file under
//     deploy/examples (<!-- example: path -->), which a test applies;
//   - every reason that arcflow's code gives a status condition or an event
//     (worker/, activities/ and internal/: Reason fields, reason parameters,
//     and what the functions called there return; see CodeReasons) has a row
//     in a Reason table of docs/troubleshooting.md;
//   - the chart's README is what helm-docs generates from values.yaml;
//   - no line names a path on the machine that wrote it (/root/, /home/, ...).
//
// Each check is a function over file contents, unit-tested on small inputs.
package docscheck
