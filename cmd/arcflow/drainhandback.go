//go:build !webhookonly

package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/activities"
	"github.com/arcflow/arcflow/activities/calls"
	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/workflows"
)

// Going back to ARC keeps every job. ARC has no reconcile for webhooks it
// did not get, so a job queued while arcflow held its autoscaler at 0 would
// wait for GitHub's 24-hour timeout. drain hands such jobs back in ARC's own
// form: each autoscaler's reservations of jobs still queued (its state query)
// become entries of its HRA's spec.capacityReservations, one replica each,
// named after the job (arcflow-job-<id>, so a second drain doubles nothing)
// and expiring when arcflow's reservation would; ARC's controller, once
// started, creates their runners.
//
// drain writes them once per autoscaler as it holds it. The hold it sends
// (force-scale with handBack) makes the autoscaler itself write every job
// queued after that, and remove the entry of one that completes, for as long
// as the hold lasts (workflows/handback.go): a job that reaches arcflow's
// webhook after drain returned, before GitHub's webhook points at ARC's
// webhook server, is handed back as well. drain --undo removes them all.

// handBackTargets hands the queued jobs of every autoscaler held and not yet
// handed back by this drain to ARC. It returns the autoscalers whose jobs are
// not handed back yet (their query failed, or the write), which keep drain
// from reporting done.
func (d *drainer) handBackTargets(ctx context.Context, t *drainTargets) []string {
	if d.handedBack == nil {
		d.handedBack = map[string]bool{}
	}
	var pending []string
	now := time.Now()
	for _, id := range slices.Sorted(maps.Keys(t.autoscalers)) {
		s := t.autoscalers[id]
		if d.handedBack[id] {
			continue
		}
		if s == nil {
			pending = append(pending, id) // its query failed: the next round asks again
			continue
		}
		in := handBackInput(s, now)
		if len(in.Add) == 0 {
			d.handedBack[id] = true // nothing queued: the autoscaler hands back what comes
			continue
		}
		out, err := activities.HandBackToHRA(ctx, d.dynamic, in)
		if err != nil {
			hint := ""
			if apierrors.IsForbidden(err) {
				hint = "; grant the worker's service account update on horizontalrunnerautoscalers, or these jobs wait in ARC"
			}
			fmt.Fprintf(d.out, "drain: %s: cannot hand its queued jobs back to ARC yet: %v%s (trying again)\n", id, err, hint)
			pending = append(pending, id)
			continue
		}
		d.handedBack[id] = true
		if len(in.Add) > 0 {
			fmt.Fprintf(d.out, "drain: %s: handed %s back to ARC as capacityReservations of HRA %s/%s (%d new, named %s<job id>)\n",
				id, plural(len(in.Add), "queued job"), in.Namespace, in.Name, out.Added, calls.HandBackPrefix)
		}
	}
	return pending
}

// handBackInput is the write that hands an autoscaler's queued jobs back to
// ARC at now: one entry in ARC's form per reservation of a job not started.
func handBackInput(s *workflows.AutoscalerState, now time.Time) calls.HandBackInput {
	in := calls.HandBackInput{Namespace: s.Spec.Namespace, Name: s.Spec.Name}
	for _, r := range workflows.QueuedForARC(s, now) {
		in.Add = append(in.Add, r.InARCForm(now))
	}
	return in
}

// undoHandBack removes every entry drain and the held autoscalers handed
// back from the HRAs of the drained namespaces: with arcflow in charge again,
// ARC would otherwise scale for them too, and arcflow's autoscalers reserve
// those jobs themselves. It runs after the holds ended, so no autoscaler
// writes one again.
func (d *drainer) undoHandBack(ctx context.Context) error {
	list, err := d.dynamic.Resource(v1alpha1.HorizontalRunnerAutoscalerResource).Namespace(d.opts.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list HorizontalRunnerAutoscalers to remove the jobs handed back to ARC: %w", err)
	}
	for _, u := range list.Items {
		if !slices.ContainsFunc(capacityNames(u.Object), calls.HandedBack) {
			continue
		}
		out, err := activities.HandBackToHRA(ctx, d.dynamic, calls.HandBackInput{Namespace: u.GetNamespace(), Name: u.GetName(), RemoveAll: true})
		if err != nil {
			return err
		}
		if out.Removed > 0 {
			fmt.Fprintf(d.out, "drain --undo: hra %s/%s: removed %s handed back to ARC\n", u.GetNamespace(), u.GetName(), plural(out.Removed, "capacity reservation"))
		}
	}
	return nil
}

// capacityNames are the names of an HRA's capacityReservations.
func capacityNames(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	list, _ := spec["capacityReservations"].([]any)
	var names []string
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	return names
}
