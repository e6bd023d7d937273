package workflows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDerivedSuffixesAreStableAndSpread(t *testing.T) {
	seen := map[string]bool{}
	for n := 1; n <= 200; n++ {
		s := derivedSuffix("5f0c7c4e-9a51-4a8e-b1d4-0d6f3c2a9e11", n)
		require.Len(t, s, 5)
		require.Empty(t, strings.Trim(s, suffixAlphabet), "only the alphabet's characters")
		require.Equal(t, s, derivedSuffix("5f0c7c4e-9a51-4a8e-b1d4-0d6f3c2a9e11", n), "the same on replay")
		seen[s] = true
	}
	require.Len(t, seen, 200)
	require.NotEqual(t, derivedSuffix("run-a", 1), derivedSuffix("run-b", 1), "another pool's chain names others")
}
