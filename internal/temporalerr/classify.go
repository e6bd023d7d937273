package temporalerr

import (
	"errors"
	"regexp"
	"strings"

	"go.temporal.io/api/serviceerror"
)

// Reasons of the resources' Accepted condition, and of the webhook's refusals.
const (
	// ReasonUnavailable: Temporal did not answer or failed the call; the change
	// waits in the worker and is sent again with backoff.
	ReasonUnavailable = "TemporalUnavailable"
	// ReasonNotSetUp: Temporal answered that arcflow's namespace or one of its
	// search attributes does not exist; `arcflow setup` (or the worker's
	// --setup-temporal) mends it.
	ReasonNotSetUp = "TemporalNotSetUp"
)

// Problem is a failed Temporal call, read for an operator.
type Problem struct {
	// Reason is ReasonUnavailable or ReasonNotSetUp.
	Reason string
	// Message says what is missing or what failed, and what to do. It stays
	// the same from one failed try to the next, so a condition written with it
	// is not rewritten on every retry; the error itself goes to the log.
	Message string
}

// searchAttributeName finds the attribute a refusal names, in the wordings
// the server has used ("search attribute ArcflowKind is not defined",
// "no mapping defined for search attribute ArcflowKind").
var searchAttributeName = regexp.MustCompile(`search attribute ([A-Za-z0-9_]+)`)

// Classify reads err from a Temporal client call on namespace. Every failure
// is one of the two: a call that reached no verdict about arcflow's setup is
// worth trying again.
func Classify(err error, namespace string) Problem {
	var nsMissing *serviceerror.NamespaceNotFound
	if errors.As(err, &nsMissing) {
		return Problem{Reason: ReasonNotSetUp, Message: "Temporal has no namespace " + quote(namespace) +
			": create it (temporal operator namespace create), then run `arcflow setup`, or start the worker with --setup-temporal"}
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Error()), "search attribute") {
		name := "of arcflow's"
		if m := searchAttributeName.FindStringSubmatch(invalid.Error()); m != nil {
			name = m[1]
		}
		return Problem{Reason: ReasonNotSetUp, Message: "Temporal's namespace " + quote(namespace) + " lacks the search attribute " + name +
			": run `arcflow setup`, or start the worker with --setup-temporal"}
	}
	return Problem{Reason: ReasonUnavailable, Message: "Temporal cannot be reached or failed the call; arcflow keeps the change and sends it again with backoff"}
}

func quote(s string) string { return `"` + s + `"` }
