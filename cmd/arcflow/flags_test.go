package main

import (
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/webhook"
)

// An operator behind a slow proxy sets the webhook's timeouts by flag or by
// environment; the flag wins.
func TestWebhookTimeoutsFromFlagsAndEnvironment(t *testing.T) {
	t.Setenv("ARCFLOW_WEBHOOK_READ_TIMEOUT", "25s")
	t.Setenv("ARCFLOW_WEBHOOK_WRITE_TIMEOUT", "40s")
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	w := addWebhookFlags(fs)
	require.NoError(t, fs.Parse([]string{"--webhook-write-timeout=45s"}))
	require.Equal(t, 25*time.Second, w.readTimeout)
	require.Equal(t, 45*time.Second, w.writeTimeout)
	require.Equal(t, webhook.DefaultMaxConnections, w.maxConnections)
}
