package main

import "context"

func runBench(ctx context.Context, args []string) error { return nil }
func runChaos(ctx context.Context, args []string) error { return nil }
