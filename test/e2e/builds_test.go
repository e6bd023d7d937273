package e2e

import (
	"context"
	"flag"
	"os"
	"sync"

	"github.com/arcflow/arcflow/sim/world"
)

// buildsDir holds what the test binary builds from this tree (arcflow and its
// image); TestMain makes it and removes it when the tests end.
var buildsDir string

// builtArcflow builds cmd/arcflow, and arcflow-webhook beside it, once per
// test binary.
var builtArcflow = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(buildsDir, "arcflow-bin-")
	if err != nil {
		return "", err
	}
	root, err := rootDir()
	if err != nil {
		return "", err
	}
	return world.BuildArcflow(context.Background(), root, dir)
})

// builtImage builds arcflow's image for this machine's platform, unpacked,
// once per test binary.
var builtImage = sync.OnceValues(func() (*unpackedImage, error) {
	root, err := rootDir()
	if err != nil {
		return nil, err
	}
	return buildUnpackedImage(root)
})

// builtTemporalImage builds the bundled Temporal's image for this machine's
// platform, unpacked, once per test binary.
var builtTemporalImage = sync.OnceValues(buildUnpackedTemporalImage)

// startBuilds begins the builds while the stack starts, when the whole
// package runs: arcflow and its image each link for about 10 s on two cores,
// which the first test that needs them (the two that run alone, first)
// waited for. The bundled Temporal's image, whose CLI is the longest link
// (90 s on a cold Go cache), follows arcflow's image, so it is ready when
// the two tests that need it start instead of holding their slots while it
// builds. A run of chosen tests (-run) builds only what they ask for. It
// returns a wait for the builds it started, so that none is cut off, half
// written, at the exit.
func startBuilds() (wait func()) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return func() {}
	}
	var builds sync.WaitGroup
	builds.Go(func() { _, _ = builtArcflow() })
	builds.Go(func() {
		_, _ = builtImage()
		_, _ = builtTemporalImage()
	})
	return builds.Wait
}
