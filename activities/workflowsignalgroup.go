package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Runners of a burst end within a second or two of each other, and each end
// was one signal to their pool: one Temporal action and one history event a
// runner. When the worker groups signals (Workflows.GroupSignals, the
// --group-runner-ends flag), a grouped signal waits up to signalGroupWindow
// for others to the same workflow under the same group name, and all go as
// one signal whose argument is the list of theirs. Each call returns only
// once the signal that carries its argument is in the workflow's history (or
// failed), so a local activity that returns has told its pool, as before.
// Otherwise each goes alone under its own name, which any pool reads: a pool
// served by a worker older than grouping does not read the group's.
const (
	signalGroupWindow = 100 * time.Millisecond
	// maxGroupedSignals bounds one signal's list; a full group goes at once.
	maxGroupedSignals = 100
	// groupSignalTimeout bounds the one call a group makes.
	groupSignalTimeout = 30 * time.Second
)

// signalGroups are the open groups of a worker, by workflow ID and signal name.
type signalGroups struct {
	mu   sync.Mutex
	open map[string]*signalGroup
}

// signalGroup is the arguments gathered for one signal.
type signalGroup struct {
	workflowID, name string
	args             []json.RawMessage
	sent             chan struct{} // closed once err is set
	err              error
}

// SignalWorkflowGrouped sends s, grouped or alone (see above). Grouped, the
// receiver gets one signal named s.GroupName whose argument is the JSON list
// of the group's arguments. A workflow that is gone is no error, as for
// SignalWorkflow, and the receiver must take a repeat calmly.
func (w *Workflows) SignalWorkflowGrouped(ctx context.Context, s GroupedSignal) error {
	if !w.GroupSignals || (w.CanGroupSignals != nil && !w.CanGroupSignals(ctx)) {
		return w.SignalWorkflow(ctx, WorkflowSignal{WorkflowID: s.WorkflowID, Name: s.Name, Arg: s.Arg})
	}
	window := w.SignalGroupWindow
	if window <= 0 {
		window = signalGroupWindow
	}
	group := w.groups.join(WorkflowSignal{WorkflowID: s.WorkflowID, Name: s.GroupName, Arg: s.Arg}, window, w.sendGroup)
	select {
	case <-group.sent:
		return group.err
	case <-ctx.Done():
		return fmt.Errorf("signal %s to %s: %w", s.GroupName, s.WorkflowID, ctx.Err())
	}
}

// join adds s to its open group, opening one (sent after the window) if none
// is, and returns the group.
func (g *signalGroups) join(s WorkflowSignal, window time.Duration, send func(*signalGroup)) *signalGroup {
	key := s.WorkflowID + "\x00" + s.Name
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = map[string]*signalGroup{}
	}
	group := g.open[key]
	if group == nil {
		group = &signalGroup{workflowID: s.WorkflowID, name: s.Name, sent: make(chan struct{})}
		g.open[key] = group
		time.AfterFunc(window, func() {
			if g.close(key, group) {
				send(group)
			}
		})
	}
	group.args = append(group.args, s.Arg)
	if len(group.args) >= maxGroupedSignals {
		delete(g.open, key)
		go send(group)
	}
	return group
}

// close takes the group out of the open ones, reporting whether it still was
// (a full group left early).
func (g *signalGroups) close(key string, group *signalGroup) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[key] != group {
		return false
	}
	delete(g.open, key)
	return true
}

// sendGroup sends a closed group's one signal, as SignalWorkflow does, and
// wakes its callers.
func (w *Workflows) sendGroup(group *signalGroup) {
	defer close(group.sent)
	args, err := json.Marshal(group.args)
	if err != nil { // a list of JSON values; this cannot fail
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupSignalTimeout)
	defer cancel()
	if err := w.SignalWorkflow(ctx, WorkflowSignal{WorkflowID: group.workflowID, Name: group.name, Arg: args}); err != nil {
		group.err = fmt.Errorf("%d grouped: %w", len(group.args), err)
	}
}
