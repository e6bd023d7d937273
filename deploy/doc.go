// Package deploy holds arcflow's Helm chart (helm/arcflow), kustomize base and
// components (kustomize/), CRDs, examples and monitoring files. Its tests render
// the chart and the kustomize components, check that the objects in them refer to
// each other correctly, apply them to a real API server (a server-side dry run,
// with the Prometheus Operator's CRDs from testdata), and check that the
// generated copies of the alert rules match the chart; make lint runs them.
//
// With -update, TestGeneratedAlertRules rewrites the copies (make generate does):
//
//	go test ./deploy -run TestGeneratedAlertRules -update
package deploy
