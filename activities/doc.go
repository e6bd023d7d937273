// Package activities holds arcflow's Temporal activities: Kubernetes activities
// (runner pods, StatefulSets, token Secrets, status), GitHub activities (find and
// remove runners), and one that starts many workflows at once for a pool. Every
// activity is idempotent; registration tokens never cross an activity boundary.
package activities
