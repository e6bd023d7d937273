//go:build !webhookonly

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/api/v1alpha1"
)

// drainPoll is how often drain looks again; drainQuiet how long it stays
// silent while nothing changes.
const (
	drainPoll  = 2 * time.Second
	drainQuiet = 30 * time.Second
)

// drainLeft is what still runs.
type drainLeft struct {
	runners map[string]int // running runner workflows by state
	pods    []string       // runner pods, namespace/name
	// above are pools whose desired replicas are not 0 yet: their hold has
	// not reached them, and they may still create a runner.
	above []string
	// handBack are autoscalers whose queued jobs are not handed back to ARC yet.
	handBack []string
}

func (l *drainLeft) none() bool {
	return len(l.runners) == 0 && len(l.pods) == 0 && len(l.above) == 0 && len(l.handBack) == 0
}

func (l *drainLeft) String() string {
	n := 0
	for _, c := range l.runners {
		n += c
	}
	s := plural(n, "runner workflow")
	if n > 0 {
		s += " (" + formatCounts(l.runners) + ")"
	}
	s += ", " + plural(len(l.pods), "runner pod")
	if len(l.above) > 0 {
		s += fmt.Sprintf("; %s not at 0 yet (%s)", plural(len(l.above), "pool"), strings.Join(l.above, ", "))
	}
	if len(l.handBack) > 0 {
		s += fmt.Sprintf("; queued jobs not yet handed back to ARC by %s (%s)", plural(len(l.handBack), "autoscaler"), strings.Join(l.handBack, ", "))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// run holds everything at 0 and waits until nothing runs, or the timeout.
func (d *drainer) run(ctx context.Context) error {
	start := time.Now()
	deadline := start.Add(d.opts.timeout)
	var last string
	var lastPrinted time.Time
	for {
		left, err := d.round(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("interrupted; the hold stays in place: %w", ctx.Err())
		case err != nil:
			fmt.Fprintf(d.out, "drain: %v (trying again)\n", err)
		case left.none():
			if err := d.releasePools(ctx); err != nil {
				fmt.Fprintf(d.out, "drain: %v (trying again)\n", err)
				break
			}
			fmt.Fprintf(d.out, "drain: done after %s: no arcflow runner pod or runner workflow is left in %s, and the queued jobs are handed back. "+
				"ARC's controller-manager can be started again, if it does not run yet; `arcflow drain --undo` ends the hold.\n",
				time.Since(start).Round(time.Second), d.opts.where())
			return nil
		case left.String() != last || time.Since(lastPrinted) >= drainQuiet:
			last, lastPrinted = left.String(), time.Now()
			fmt.Fprintf(d.out, "drain: %s: left: %s\n", time.Since(start).Round(time.Second), last)
		}
		if !time.Now().Before(deadline) {
			if d.opts.timeout == 0 {
				return nil // asked only to hold and report
			}
			return fmt.Errorf("timed out after %s with %s left; the hold stays in place: run drain again to keep waiting", d.opts.timeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted; the hold stays in place: %w", ctx.Err())
		case <-time.After(min(drainPoll, time.Until(deadline))):
		}
	}
}

// round holds what is new and counts what is left.
func (d *drainer) round(ctx context.Context) (*drainLeft, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t, err := d.listTargets(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.hold(ctx, t); err != nil {
		return nil, err
	}
	left := &drainLeft{runners: map[string]int{}, handBack: d.handBackTargets(ctx, t)}
	for _, id := range slices.Sorted(maps.Keys(t.pools)) {
		if s := t.pools[id]; s.Desired() > 0 {
			left.above = append(left.above, id)
		}
	}
	counts, err := runnerCounts(ctx, d.tc, d.opts.namespace)
	if err != nil {
		return nil, err
	}
	for _, byState := range counts {
		for state, n := range byState {
			left.runners[state] += n
		}
	}
	pods, err := d.kube.CoreV1().Pods(d.opts.namespace).List(ctx, metav1.ListOptions{LabelSelector: activities.LabelPool})
	if err != nil {
		return nil, fmt.Errorf("list runner pods: %w", err)
	}
	for _, p := range pods.Items {
		left.pods = append(left.pods, p.Namespace+"/"+p.Name)
	}
	return left, nil
}

// releasePools removes arcflow's finalizer from the drained RunnerDeployments
// and RunnerSets: with no runner left, nothing needs to wait for their
// deletion, and an uninstalled arcflow must not leave one behind. The worker
// adds it back at the resource's next change.
func (d *drainer) releasePools(ctx context.Context) error {
	for _, kind := range []string{v1alpha1.KindRunnerDeployment, v1alpha1.KindRunnerSet} {
		list, err := d.dynamic.Resource(activities.PoolResource(kind)).Namespace(d.opts.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list %ss: %w", kind, err)
		}
		for _, u := range list.Items {
			if !slices.Contains(u.GetFinalizers(), activities.PoolFinalizer) {
				continue
			}
			ref := activities.PoolResourceRef{Namespace: u.GetNamespace(), Kind: kind, Name: u.GetName()}
			if err := activities.RemovePoolFinalizer(ctx, d.dynamic, ref); err != nil {
				return err
			}
		}
	}
	return nil
}
