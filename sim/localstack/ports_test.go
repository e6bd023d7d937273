package localstack

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A port handed out and free again is not handed out a second time: a server
// restarted on its ports would find one taken by a test beside it.
func TestAPortIsHandedOutOnce(t *testing.T) {
	ledger := &portLedger{given: map[int]bool{}}
	first, err := FreePorts(2) // two ports free now, from the real ledger
	require.NoError(t, err)
	draws := []int{first[0], first[0], first[0], first[1]}
	next := func() int { p := draws[0]; draws = draws[1:]; return p }

	got, err := ledger.reserve(1, next)
	require.NoError(t, err)
	require.Equal(t, []int{first[0]}, got)
	got, err = ledger.reserve(1, next)
	require.NoError(t, err)
	require.Equal(t, []int{first[1]}, got, "the port handed out before is skipped though nothing listens on it")
}
