package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseWarmVariants(t *testing.T) {
	got, err := parseWarmVariants("none; 2;auto;auto,max=5@2m")
	require.NoError(t, err)
	require.Equal(t, []warmVariant{{"", warmDelay}, {"2", warmDelay}, {"auto", warmDelay}, {"auto,max=5", 2 * time.Minute}}, got)
	var names []string
	for _, v := range got {
		names = append(names, v.String())
	}
	require.Equal(t, []string{"none", "fixed 2", "auto", "auto,max=5, delay 2m0s"}, names)
	require.Equal(t, "auto-max-5--delay-2m0s", nameSafe(got[3].String()))
	for _, bad := range []string{"two", "auto@soon", "2@0s"} {
		_, err := parseWarmVariants(bad)
		require.Error(t, err, bad)
	}
}
