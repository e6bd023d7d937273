package temporalerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

func TestClassifyTellsAnOutageFromAMissingSetup(t *testing.T) {
	cases := []struct {
		name        string
		err         error
		reason      string
		mentions    string
		notMentions string
	}{
		{"namespace missing", serviceerror.NewNamespaceNotFound("arcflow"), ReasonNotSetUp, `namespace "arcflow"`, ""},
		{"search attribute not defined", fmt.Errorf("signal: %w", serviceerror.NewInvalidArgument("search attribute ArcflowKind is not defined")),
			ReasonNotSetUp, "ArcflowKind", ""},
		{"search attribute with no mapping", serviceerror.NewInvalidArgument("Namespace arcflow has no mapping defined for search attribute ArcflowPool"),
			ReasonNotSetUp, "ArcflowPool", ""},
		{"server unavailable", serviceerror.NewUnavailable("connection refused"), ReasonUnavailable, "with backoff", "connection refused"},
		{"deadline", fmt.Errorf("signal: %w", context.DeadlineExceeded), ReasonUnavailable, "with backoff", ""},
		{"another invalid argument", serviceerror.NewInvalidArgument("WorkflowId is not set"), ReasonUnavailable, "with backoff", ""},
		{"anything else", errors.New("boom"), ReasonUnavailable, "with backoff", "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Classify(c.err, "arcflow")
			assert.Equal(t, c.reason, p.Reason)
			assert.Contains(t, p.Message, c.mentions)
			if c.notMentions != "" {
				assert.NotContains(t, p.Message, c.notMentions, "the message stays the same from one failure to the next")
			}
		})
	}
}
