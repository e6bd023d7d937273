package simworld

import (
	"fmt"
	"strings"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// WithIdleRunners gives the HorizontalRunnerAutoscaler named hra in a manifest an
// idle buffer of n runners (v1alpha1.IdleRunnersAnnotation). The manifest must
// write the HRA's metadata as name first, without annotations.
func WithIdleRunners(manifest, hra string, n int) string {
	head := "kind: HorizontalRunnerAutoscaler\nmetadata:\n  name: " + hra + "\n"
	return strings.Replace(manifest, head, fmt.Sprintf("%s  annotations:\n    %s: \"%d\"\n", head, v1alpha1.IdleRunnersAnnotation, n), 1)
}
