package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffPods(t *testing.T) {
	require.Equal(t, 1, backoffPods(9*time.Second))
	require.Equal(t, 2, backoffPods(10*time.Second))
	require.Equal(t, 5, backoffPods(5*time.Minute), "0, 10, 30, 70 and 150 s; the next at 310 s")
	require.Equal(t, 11, backoffPods(time.Hour), "then 310, 630 s, and every 10 min from there")
}
