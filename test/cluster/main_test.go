package cluster

import (
	"flag"
	"os"
	"testing"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/workflows/contract"
)

var stack *localstack.Stack

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every test skips itself under -short
	}
	os.Exit(localstack.Run(m, localstack.Options{
		Kubernetes: true, Temporal: true, TemporalServer: localstack.TemporalCluster,
		SearchAttributes: contract.SearchAttributeTypes(),
	}, &stack))
}
