package fakegithub_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/sim/fakegithub"
)

func TestErrorsCarryFullTypeNamesAndIDs(t *testing.T) {
	srv, c := newActions(t, fakegithub.Options{})
	setID := c.createSet("arc")
	_, a := c.createSession(setID, "pod-a")
	require.Equal(t, http.StatusOK, a.Status)
	_, a = c.createSession(setID, "pod-b")
	require.Equal(t, http.StatusConflict, a.Status)
	typeName, message := a.exception(t)
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException, GitHub.Actions.Runtime.WebApi", typeName)
	require.Contains(t, message, "pod-a", "the message names the owner")

	a = c.call(http.MethodGet, fmt.Sprintf("%s/%d", setsURL, setID+100), nil)
	require.Equal(t, http.StatusNotFound, a.Status)
	typeName, _ = a.exception(t)
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetNotFoundException, GitHub.Actions.Runtime.WebApi", typeName)

	a = c.call(http.MethodPost, setsURL, map[string]any{"name": "arc", "runnerGroupId": 1})
	typeName, _ = a.exception(t)
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetExistsException, GitHub.Actions.Runtime.WebApi", typeName)

	a = c.call(http.MethodGet, "_apis/distributedtask/pools/0/agents/424242", nil)
	require.Equal(t, http.StatusNotFound, a.Status)
	typeName, _ = a.exception(t)
	require.Equal(t, "GitHub.DistributedTask.WebApi.AgentNotFoundException, GitHub.DistributedTask.WebApi", typeName)

	// Every answer, success or not, carries fresh ids.
	ok := c.call(http.MethodGet, fmt.Sprintf("%s/%d", setsURL, setID), nil)
	require.Equal(t, http.StatusOK, ok.Status)
	for _, ans := range []answer{a, ok} {
		require.Regexp(t, regexp.MustCompile(`^[0-9a-f-]{36}$`), ans.Header.Get("ActivityId"))
		require.NotEmpty(t, ans.Header.Get("X-GitHub-Request-Id"))
	}
	require.NotEqual(t, a.Header.Get("ActivityId"), ok.Header.Get("ActivityId"))
	require.NotEqual(t, a.Header.Get("X-GitHub-Request-Id"), ok.Header.Get("X-GitHub-Request-Id"))

	require.Equal(t, []string{"scaleset-test/1.0"}, srv.ActionsUserAgents())
	send(t, http.MethodGet, c.base+setsURL+"?name=x&runnerGroupId=1", "Bearer "+c.admin, nil, map[string]string{"User-Agent": "other/2"})
	require.Equal(t, "other/2", srv.LastActionsUserAgent())
	require.Equal(t, []string{"scaleset-test/1.0", "other/2"}, srv.ActionsUserAgents())
}

func TestTheQueueURLIsUsedAsGiven(t *testing.T) {
	srv, c := newActions(t, shortHold())
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	require.Equal(t, fmt.Sprintf("%s%s/%d/messages?sessionId=%s", c.base, setsURL, setID, sess.SessionID), sess.MessageQueueURL)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f-]{36}$`), sess.SessionID, "a UUID, as the service's")

	require.Equal(t, http.StatusAccepted, poll(t, sess, 0, 5).Status, "no message yet")
	srv.QueueJob("octo/app", "build", []string{"arc"})
	a := poll(t, sess, 0, 5)
	require.Equal(t, http.StatusOK, a.Status)
	var msg envelope
	a.decode(t, &msg)
	require.Equal(t, "RunnerScaleSetJobMessages", msg.MessageType)
	require.Equal(t, http.StatusAccepted, poll(t, sess, msg.MessageID, 5).Status, "nothing after lastMessageId")

	// A client that adds to the query is refused, on GET and on DELETE.
	withVersion := sess
	withVersion.MessageQueueURL += "&api-version=6.0-preview"
	for _, a := range []answer{poll(t, withVersion, 0, 5), ack(t, withVersion, msg.MessageID)} {
		require.Equal(t, http.StatusBadRequest, a.Status)
		typeName, message := a.exception(t)
		require.Equal(t, "GitHub.DistributedTask.WebApi.ArgumentException, GitHub.DistributedTask.WebApi", typeName)
		require.Contains(t, message, "api-version")
	}
	// The session is found by the query, not by the path.
	u, err := url.Parse(sess.MessageQueueURL)
	require.NoError(t, err)
	u.RawQuery = ""
	noSession := sess
	noSession.MessageQueueURL = u.String()
	require.Equal(t, http.StatusBadRequest, poll(t, noSession, 0, 5).Status)

	require.Equal(t, http.StatusNoContent, ack(t, sess, msg.MessageID).Status)
	again := ack(t, sess, msg.MessageID)
	require.Equal(t, http.StatusNotFound, again.Status, "a second delete finds no message")
	require.Equal(t, http.StatusNotFound, ack(t, sess, 42).Status, "nor does an id never sent")
	wrongToken := sess
	wrongToken.MessageQueueAccessToken = "nope"
	require.Equal(t, http.StatusUnauthorized, poll(t, wrongToken, 0, 5).Status)
}

func TestSessionDeletesAndExpiry(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	_, c := newActions(t, fakegithub.Options{Now: clock, Actions: fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond, SessionTTL: time.Minute}})
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	require.Equal(t, http.StatusNoContent, c.sessionCall(http.MethodDelete, setID, sess.SessionID).Status, "the live session")
	a := c.sessionCall(http.MethodDelete, setID, sess.SessionID)
	require.Equal(t, http.StatusBadRequest, a.Status, "a session that is gone")
	typeName, _ := a.exception(t)
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionExpiredException, GitHub.Actions.Runtime.WebApi", typeName)

	sess, _ = c.createSession(setID, "pod")
	now = now.Add(2 * time.Minute) // nobody polled: it expired
	require.Equal(t, http.StatusBadRequest, c.sessionCall(http.MethodDelete, setID, sess.SessionID).Status)
	sess, a = c.createSession(setID, "pod")
	require.Equal(t, http.StatusOK, a.Status, "an expired session holds the set no more")
	require.Equal(t, http.StatusOK, c.sessionCall(http.MethodPatch, setID, sess.SessionID).Status)
}

func TestAnEvictedSession(t *testing.T) {
	srv, c := newActions(t, fakegithub.Options{Actions: fakegithub.ActionsOptions{PollHold: 5 * time.Second}})
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	waiting := make(chan answer)
	started := time.Now()
	go func() { waiting <- poll(t, sess, 0, 5) }()
	time.Sleep(200 * time.Millisecond) // the poll waits (the call is logged once answered)
	require.NoError(t, srv.ExpireSession(setID))
	held := <-waiting
	require.Equal(t, http.StatusNotFound, held.Status)
	require.Less(t, time.Since(started), 4*time.Second, "a poll that waits ends at once")
	typeName, _ := held.exception(t)
	require.Equal(t, "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionNotFoundException, GitHub.Actions.Runtime.WebApi", typeName)
	a := poll(t, sess, 0, 5)
	require.Equal(t, http.StatusNotFound, a.Status)
	typeName, _ = a.exception(t)
	require.Contains(t, typeName, "RunnerScaleSetSessionNotFoundException")
	a = c.sessionCall(http.MethodPatch, setID, sess.SessionID)
	require.Equal(t, http.StatusNotFound, a.Status)
	typeName, _ = a.exception(t)
	require.Contains(t, typeName, "RunnerScaleSetSessionNotFoundException")
	require.Equal(t, http.StatusBadRequest, c.sessionCall(http.MethodDelete, setID, sess.SessionID).Status)
	_, a = c.createSession(setID, "pod")
	require.Equal(t, http.StatusOK, a.Status)
}

func TestASessionWithNoQueueURLHoldsTheSet(t *testing.T) {
	srv, c := newActions(t, shortHold())
	setID := c.createSet("arc")
	srv.EmptyQueueURLNext(1)
	broken, a := c.createSession(setID, "pod")
	require.Equal(t, http.StatusOK, a.Status)
	require.Empty(t, broken.MessageQueueURL)
	require.NotEmpty(t, broken.SessionID)
	require.NotEmpty(t, broken.MessageQueueAccessToken)
	require.NotNil(t, broken.Statistics)
	_, a = c.createSession(setID, "pod")
	require.Equal(t, http.StatusConflict, a.Status, "the session was made all the same")
	require.Equal(t, http.StatusNoContent, c.sessionCall(http.MethodDelete, setID, broken.SessionID).Status)
	sess, a := c.createSession(setID, "pod")
	require.Equal(t, http.StatusOK, a.Status)
	require.NotEmpty(t, sess.MessageQueueURL, "only the next n")
}

func TestAStaleSessionHoldsTheSetForAWhile(t *testing.T) {
	now := time.Now()
	srv, c := newActions(t, fakegithub.Options{Now: func() time.Time { return now }})
	setID := c.createSet("arc")
	require.NoError(t, srv.HoldSetBy(setID, "dead-pod", 5*time.Minute))
	require.Equal(t, "dead-pod", srv.ScaleSets()[0].SessionOwner)
	_, a := c.createSession(setID, "pod")
	require.Equal(t, http.StatusConflict, a.Status)
	_, message := a.exception(t)
	require.Contains(t, message, "dead-pod")
	now = now.Add(4 * time.Minute)
	_, a = c.createSession(setID, "pod")
	require.Equal(t, http.StatusConflict, a.Status, "still held")
	now = now.Add(time.Minute)
	sess, a := c.createSession(setID, "pod")
	require.Equal(t, http.StatusOK, a.Status, "expired after 5 minutes")
	require.Equal(t, sess.SessionID, srv.ScaleSets()[0].Session)
}

func TestAForeignMessageIsQueuedLikeAnother(t *testing.T) {
	srv, c := newActions(t, shortHold())
	setID := c.createSet("arc")
	sess, _ := c.createSession(setID, "pod")
	srv.QueueJob("octo/app", "build", []string{"arc"})
	id, err := srv.SendForeignMessage(setID, "")
	require.NoError(t, err)
	var jobs, foreign envelope
	poll(t, sess, 0, 5).decode(t, &jobs)
	require.Equal(t, "RunnerScaleSetJobMessages", jobs.MessageType, "the job events made before come first")
	poll(t, sess, jobs.MessageID, 5).decode(t, &foreign)
	require.Equal(t, id, foreign.MessageID)
	require.Equal(t, "RunnerScaleSetJobMessagesV2", foreign.MessageType)
	var asJobs []map[string]any
	require.Error(t, json.Unmarshal([]byte(foreign.Body), &asJobs), "its body is no job array")
	require.Equal(t, http.StatusNoContent, ack(t, sess, jobs.MessageID).Status)
	var again envelope
	poll(t, sess, 0, 5).decode(t, &again)
	require.Equal(t, id, again.MessageID, "redelivered until deleted")
	require.Equal(t, http.StatusNoContent, ack(t, sess, id).Status)
	require.Equal(t, http.StatusAccepted, poll(t, sess, 0, 5).Status)
}

func TestAcquirableJobsCanBeMissing(t *testing.T) {
	srv, c := newActions(t, fakegithub.Options{Actions: fakegithub.ActionsOptions{GHES: true}})
	setID := c.createSet("arc")
	path := fmt.Sprintf("%s/%d/acquirablejobs", setsURL, setID)
	require.Equal(t, http.StatusNoContent, c.call(http.MethodGet, path, nil).Status)
	require.NoError(t, srv.AcquirableJobsNotFound(setID, true))
	require.Equal(t, http.StatusNotFound, c.call(http.MethodGet, path, nil).Status)
	require.NoError(t, srv.AcquirableJobsNotFound(setID, false))
	require.Equal(t, http.StatusNoContent, c.call(http.MethodGet, path, nil).Status)
}
