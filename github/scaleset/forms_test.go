package scaleset_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github/scaleset"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// A message deleted twice (a retried ack) is acknowledged, not an error.
func TestASecondDeleteOfAMessageIsNoError(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.NotNil(t, msg)
	require.NoError(t, c.DeleteMessage(ctx, org, set.ID, sess.ID, msg.ID))
	require.NoError(t, c.DeleteMessage(ctx, org, set.ID, sess.ID, msg.ID), "the queue no longer has it: acknowledged")
}

// A session the service opened without a queue (ARC #4370) is deleted at
// once, so it does not hold the set until it expires.
func TestASessionWithoutAQueueIsDeleted(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{SessionTTL: time.Hour})
	ctx := context.Background()
	set := createSet(t, c)
	fake.EmptyQueueURLNext(1)
	_, err := c.CreateSession(ctx, org, set.ID, "w")
	require.ErrorIs(t, err, scaleset.ErrNoMessageQueue)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err, "the set is free: no 409 for an hour")
	require.NotEmpty(t, sess.ID)
}

// An expired session's DELETE is a 400 RunnerScaleSetSessionExpiredException;
// its refresh a 404; the poll of it a lost session.
func TestAnExpiredSessionIsTold(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	require.NoError(t, fake.ExpireSession(set.ID))
	_, err = c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.ErrorIs(t, err, scaleset.ErrSessionNotFound)
	_, err = c.RefreshSession(ctx, org, set.ID, sess.ID)
	require.ErrorIs(t, err, scaleset.ErrSessionNotFound)
	err = c.DeleteSession(ctx, org, set.ID, sess.ID)
	require.ErrorIs(t, err, scaleset.ErrSessionExpired)
	require.Contains(t, err.Error(), "activity_id=", "the ids GitHub support asks for")
	require.Contains(t, err.Error(), "github_request_id=")
}

// A message of another type comes back with its type and nothing read from
// it; the jobs messages after it are read as ever.
func TestAMessageOfAnotherTypeIsNotRead(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	sess, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	id, err := fake.SendForeignMessage(set.ID, "")
	require.NoError(t, err)
	msg, err := c.GetMessage(ctx, org, set.ID, sess.ID, 0, 10)
	require.NoError(t, err)
	require.Equal(t, id, msg.ID)
	require.NotEqual(t, scaleset.JobMessagesType, msg.Type)
	require.Empty(t, msg.Jobs)
	require.NoError(t, c.DeleteMessage(ctx, org, set.ID, sess.ID, msg.ID))
	fake.QueueJob("octo/app", "build", []string{"arc-linux"})
	msg, err = c.GetMessage(ctx, org, set.ID, sess.ID, id, 10)
	require.NoError(t, err)
	require.Equal(t, scaleset.JobMessagesType, msg.Type)
	require.Len(t, msg.Jobs, 1)
}

// Every call names arcflow and its version, and a set's calls the set.
func TestCallsSendAUserAgent(t *testing.T) {
	fake, c := newClient(t, fakegithub.ActionsOptions{PollHold: 50 * time.Millisecond})
	ctx := context.Background()
	set := createSet(t, c)
	_, err := c.CreateSession(ctx, org, set.ID, "w")
	require.NoError(t, err)
	agents := fake.ActionsUserAgents()
	require.NotEmpty(t, agents)
	for _, ua := range agents {
		require.True(t, strings.HasPrefix(ua, "arcflow/"), ua)
	}
	require.Contains(t, agents, "arcflow/dev (scale-set "+itoa(set.ID)+")")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
