package contract

// SignalReadyTime: a pool tells its autoscaler how long its runners take to
// be ready (pod created -> registered), for arcflow.dev/idle-runners: auto.
const SignalReadyTime = "ready-time"

// AutoIdleRunners is arcflow.dev/idle-runners: auto: a warm buffer sized from
// the pool's arrival rate and time to ready, at most Max runners when Max > 0.
type AutoIdleRunners struct {
	Max int `json:",omitempty"`
}
