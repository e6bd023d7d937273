package workflows

import (
	"crypto/rand"
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
