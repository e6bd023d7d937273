package v1alpha1

// UnsupportedFields lists the fields of an autoscaler that arcflow accepts, for
// compatibility with ARC manifests, but does not act on. The worker reports them in a
// status condition instead of ignoring them silently.
func (hra *HorizontalRunnerAutoscaler) UnsupportedFields() []string {
	var fields []string
	for _, t := range hra.Spec.ScaleUpTriggers {
		if t.GitHubEvent == nil {
			continue
		}
		if t.GitHubEvent.CheckRun != nil {
			fields = append(fields, "spec.scaleUpTriggers[].githubEvent.checkRun (no effect since ARC v0.27)")
		}
		if t.GitHubEvent.PullRequest != nil {
			fields = append(fields, "spec.scaleUpTriggers[].githubEvent.pullRequest (no effect since ARC v0.27)")
		}
		if t.GitHubEvent.Push != nil {
			fields = append(fields, "spec.scaleUpTriggers[].githubEvent.push (no effect since ARC v0.27)")
		}
		if t.GitHubEvent.WorkflowJob != nil && t.Amount != 0 && t.Amount != 1 {
			fields = append(fields, "spec.scaleUpTriggers[].amount (each workflow job reserves one runner)")
		}
	}
	return fields
}

// RegistrationOnlyAnnotation opts a RunnerDeployment or RunnerSet into keeping one
// registered, offline runner while it is scaled to zero.
const RegistrationOnlyAnnotation = "arcflow.dev/registration-only-runner"
