package localstack

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNotEstablishedNamesCRDsWithoutATrueCondition(t *testing.T) {
	listing := "runnerdeployments.actions.summerwind.dev   True\n" +
		"runnersets.actions.summerwind.dev          <none>\n" +
		"horizontalrunnerautoscalers.actions.summerwind.dev   False\n"
	assert.Equal(t, []string{"runnersets.actions.summerwind.dev", "horizontalrunnerautoscalers.actions.summerwind.dev"}, notEstablished(listing))
	assert.Empty(t, notEstablished("a.b True\nc.d True\n"))
}
