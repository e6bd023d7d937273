package calls

import (
	"strconv"
	"strings"

	"github.com/arcflow/arcflow/api/v1alpha1"
)

// HandBackPrefix starts the name of every capacityReservations entry arcflow
// writes when it hands a queued job back to ARC (`arcflow drain`). ARC's
// webhook server writes its entries without a name; arcflow names its own
// after the job, so that writing one twice changes nothing and
// `arcflow drain --undo` finds them.
const HandBackPrefix = "arcflow-job-"

// HandBackName names the entry that hands job jobID back to ARC.
func HandBackName(jobID int64) string { return HandBackPrefix + strconv.FormatInt(jobID, 10) }

// HandedBack reports whether a capacityReservations entry is one arcflow
// wrote for a job it handed back.
func HandedBack(name string) bool { return strings.HasPrefix(name, HandBackPrefix) }

// HandBackInput changes the entries arcflow handed back to ARC in one
// HorizontalRunnerAutoscaler's spec.capacityReservations; the entries of
// others (ARC's webhook server, a user) are left as they are.
type HandBackInput struct {
	Namespace, Name string
	// Add are entries named HandBackName: one that is there already with the
	// same expirationTime stays as it is (its effectiveTime too), one with
	// another replaces it.
	Add []v1alpha1.CapacityReservation `json:",omitempty"`
	// Remove names entries to remove; RemoveAll removes every one of arcflow's.
	Remove    []string `json:",omitempty"`
	RemoveAll bool     `json:",omitempty"`
}

// HandBackOutput says what changed in the HRA (nothing when it is gone).
type HandBackOutput struct {
	Added, Removed int
}
