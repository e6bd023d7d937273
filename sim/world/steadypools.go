package world

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/arcflow/arcflow/api/v1alpha1"
	"github.com/arcflow/arcflow/sim/fakegithub"
)

// SteadyPools is a steady load over several pools in one repository, as a
// busy repository sees it: jobs arrive as a Poisson process, each asks for one
// pool's labels, a few pools far more often than the rest (pool i is chosen
// with weight 1/(i+1)), and jobs run from seconds to minutes (log-uniform
// between MinDuration and MaxDuration, fixed per job ID).
type SteadyPools struct {
	Pools      int
	Repository string
	// Rate is the mean arrival rate in jobs per second; Jobs how many arrive.
	Rate float64
	Jobs int
	// MinDuration and MaxDuration bound how long a job runs.
	MinDuration, MaxDuration time.Duration
	// MaxReplicas and ScaleDownDelaySeconds go into every pool's HRA.
	MaxReplicas, ScaleDownDelaySeconds int
	Seed                               uint64
	// IdleRunners, when set, is every HRA's arcflow.dev/idle-runners
	// ("2", "auto", ...).
	IdleRunners string
}

// PoolName is the name of the i-th pool's RunnerDeployment and HRA.
func (s SteadyPools) PoolName(i int) string { return fmt.Sprintf("pool-%02d", i) }

// PoolOf is the pool a runner of the load belongs to, from its name
// (<pool>-<suffix>), or "".
func (s SteadyPools) PoolOf(runner string) string {
	for i := range s.Pools {
		if strings.HasPrefix(runner, s.PoolName(i)+"-") {
			return s.PoolName(i)
		}
	}
	return ""
}

// Manifest is every pool's RunnerDeployment and webhook-driven HRA.
func (s SteadyPools) Manifest() string {
	var docs []string
	for i := range s.Pools {
		name := s.PoolName(i)
		docs = append(docs, RepoRunnerDeployment(name, s.Repository, name), s.hra(name))
	}
	return strings.Join(docs, "---\n")
}

// hra is a pool's HRA, with the load's idle buffer.
func (s SteadyPools) hra(name string) string {
	hra := WebhookHRA(name, v1alpha1.KindRunnerDeployment, s.MaxReplicas, s.ScaleDownDelaySeconds)
	if s.IdleRunners != "" {
		hra = WithIdleRunnersSetting(hra, name, s.IdleRunners)
	}
	return hra
}

// JobDuration is how long a job of the load runs: log-uniform in
// [MinDuration, MaxDuration], the same for the same job ID and seed.
func (s SteadyPools) JobDuration(job fakegithub.JobInfo) time.Duration {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", s.Seed, job.ID)
	u := float64(h.Sum64()%1_000_000) / 1_000_000
	lo, hi := math.Log(float64(s.MinDuration)), math.Log(float64(max(s.MaxDuration, s.MinDuration)))
	return time.Duration(math.Exp(lo + u*(hi-lo)))
}

// Queue queues the jobs through queue until all arrived or ctx ends.
func (s SteadyPools) Queue(ctx context.Context, queue func(repo, name string, labels []string)) error {
	if s.Pools <= 0 || s.Rate <= 0 {
		return fmt.Errorf("steady pools: need pools and a rate, got %d pools at %v jobs/s", s.Pools, s.Rate)
	}
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x57ead))
	var total float64
	weights := make([]float64, s.Pools)
	for i := range weights {
		weights[i] = 1 / float64(i+1)
		total += weights[i]
	}
	next := time.Now()
	for n := range s.Jobs {
		next = next.Add(time.Duration(rng.ExpFloat64() / s.Rate * float64(time.Second)))
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pick, pool := rng.Float64()*total, s.Pools-1
		for i, w := range weights {
			if pick < w {
				pool = i
				break
			}
			pick -= w
		}
		queue(s.Repository, fmt.Sprintf("job-%d", n+1), []string{"self-hosted", "linux", s.PoolName(pool)})
	}
	return nil
}
