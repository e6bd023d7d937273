package cluster

import (
	"flag"
	"os"
	"testing"

	"github.com/arcflow/arcflow/internal/teststack"
	"github.com/arcflow/arcflow/workflows/contract"
)

var stack *teststack.Stack

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every test skips itself under -short
	}
	os.Exit(teststack.Run(m, teststack.Options{
		Kubernetes: true, Temporal: true, TemporalServer: teststack.TemporalCluster,
		SearchAttributes: contract.SearchAttributeTypes(),
	}, &stack))
}
