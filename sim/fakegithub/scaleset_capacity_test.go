package fakegithub_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

// The service assigns a set no more jobs (assigned and not finished) than
// the X-ScaleSetMaxCapacity of the set's last poll, and a new value counts at
// once; jobs assigned before a lower value stay assigned.
func TestAssignmentsStayWithinTheLastCapacity(t *testing.T) {
	srv, c := newActions(t, shortHold())
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	assigned := func() int {
		t.Helper()
		st, err := srv.ScaleSetStatisticsOf(setID)
		require.NoError(t, err)
		return st.TotalAssignedJobs
	}
	queue := func(n int) (ids []int64) {
		for range n {
			ids = append(ids, srv.QueueJob("octo/app", "build", []string{"arc"}).ID)
		}
		return ids
	}

	jobs := queue(2)
	require.Equal(t, 2, assigned(), "before any poll sent a capacity, every job is assigned")
	poll(t, sess, 0, 3)
	jobs = append(jobs, queue(3)...)
	require.Equal(t, 3, assigned(), "capacity 3")
	poll(t, sess, 0, -1)
	require.Equal(t, 3, assigned(), "a poll without the header keeps the last capacity")
	poll(t, sess, 0, 5)
	require.Equal(t, 5, assigned(), "a higher capacity assigns at once")

	poll(t, sess, 0, 1)
	require.Equal(t, 5, assigned(), "a lower capacity withdraws nothing")
	jobs = append(jobs, queue(1)...)
	require.Equal(t, 5, assigned(), "but assigns nothing new")
	for _, id := range jobs[1:5] {
		require.NoError(t, srv.Withdraw(id))
	}
	require.Equal(t, 1, assigned(), "withdrawn jobs are not assigned again past the capacity")

	// The last assigned job runs and finishes: its place goes to the next.
	a := c.call(http.MethodPost, fmt.Sprintf("%s/%d/generatejitconfig", setsURL, setID), map[string]string{"name": "arc-r1"})
	require.Equal(t, http.StatusOK, a.Status)
	var config struct{ EncodedJITConfig string }
	a.decode(t, &config)
	_, err := srv.StartJIT(config.EncodedJITConfig)
	require.NoError(t, err)
	running := jobs[0]
	_, err = srv.StartJob(running, "arc-r1")
	require.NoError(t, err)
	require.Equal(t, 1, assigned(), "a running job counts")
	_, err = srv.CompleteJob(running, "success")
	require.NoError(t, err)
	require.Equal(t, 1, assigned(), "a finished job frees its place for one more")
}

// Capacity 0 stops every new assignment.
func TestCapacityZero(t *testing.T) {
	srv, c := newActions(t, shortHold())
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	require.Equal(t, http.StatusAccepted, poll(t, sess, 0, 0).Status)
	srv.QueueJob("octo/app", "build", []string{"arc"})
	st, err := srv.ScaleSetStatisticsOf(setID)
	require.NoError(t, err)
	require.Zero(t, st.TotalAssignedJobs)
	require.Equal(t, []fakegithub.ScaleSetInfo{{ID: setID, Name: "arc", RunnerGroupID: 1, Labels: []string{"arc"},
		Session: sess.SessionID, SessionOwner: "pod"}}, srv.ScaleSets())
}
