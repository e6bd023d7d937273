// Package sim stands in for what cannot be reached from a test machine: GitHub's
// job dispatcher and webhook sender, and the runner process inside each runner pod.
//
//   - Runners plays every runner pod: it registers with the fake GitHub once the pod
//     is Running, as its image's entrypoint would (a pod whose entrypoint cannot
//     start its runner fails at once), runs the jobs GitHub hands it, and exits
//     after one job when ephemeral.
//     It also takes runners away as infrastructure does (LoseNode, EvictPod,
//     OOMKill), which fails their jobs as expected losses (Lost).
//   - Sender delivers signed workflow_job webhooks, with loss, duplication, delay
//     and reordering when asked.
//   - Workload queues jobs: bursts or a steady rate, over repositories and label sets.
package sim
