package workflows

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github/registry"
	"github.com/arcflow/arcflow/workflows/contract"
)

// The webhook starts autoscalers through package contract, without linking this
// one: the type name it starts and the input it sends must be what runs here.
func TestTheWebhookStartsTheAutoscalerThisPackageRuns(t *testing.T) {
	fn := runtime.FuncForPC(reflect.ValueOf(AutoscalerWorkflow).Pointer()).Name()
	require.Equal(t, contract.AutoscalerWorkflowType, fn[strings.LastIndex(fn, ".")+1:])

	start := contract.AutoscalerStart{Spec: contract.AutoscalerSpec{
		Namespace: "ci", Name: "app", TargetKind: "RunnerDeployment", TargetName: "app", Max: 5,
		ScaleDownDelay: time.Minute, Scope: registry.Scope{Organization: "octo"}, TargetLabels: []string{"linux"},
	}}
	encoded, err := json.Marshal(start)
	require.NoError(t, err)
	var in AutoscalerInput
	require.NoError(t, json.Unmarshal(encoded, &in))
	require.Equal(t, start.Spec, in.Spec)
	require.Nil(t, in.State)
}
