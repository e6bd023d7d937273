package workflows

import (
	"crypto/rand"
	"crypto/sha256"
	"strconv"
)

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789" // no vowels: no words in names

// randomSuffix is called only inside workflow.SideEffect, which records its result.
func randomSuffix() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b)
}

// derivedSuffix is the n-th runner name suffix of a pool's chain of runs: as
// random as the chain's first run ID, which Temporal draws at random, and the
// same on replay (and after a reset), so it needs no side effect.
func derivedSuffix(runID string, n int) string {
	sum := sha256.Sum256([]byte(runID + "/" + strconv.Itoa(n)))
	b := make([]byte, 5)
	for i := range b {
		b[i] = suffixAlphabet[int(sum[i])%len(suffixAlphabet)]
	}
	return string(b)
}
