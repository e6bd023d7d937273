package e2e

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/tools/image"
)

// unpackedImage is arcflow's image, built from this tree as make image builds it
// and unpacked: its root filesystem and the config a container runtime reads.
type unpackedImage struct {
	rootfs     string
	entrypoint []string
	env        []string
	workingDir string
}

// arcflowImage is the image built from this tree (builtImage).
func arcflowImage(t *testing.T) *unpackedImage {
	t.Helper()
	img, err := builtImage()
	require.NoError(t, err)
	return img
}

func buildUnpackedImage(root string) (*unpackedImage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp(buildsDir, "arcflow-image-")
	if err != nil {
		return nil, err
	}
	platform := image.Platform("linux/" + runtime.GOARCH)
	res, err := image.Build(ctx, image.Options{OutDir: filepath.Join(dir, "oci"), ModuleDir: root, Platforms: []image.Platform{platform}})
	if err != nil {
		return nil, err
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := image.Unpack(res.Layout, platform, rootfs); err != nil {
		return nil, err
	}
	img, err := image.PlatformImageFromLayout(res.Layout, platform)
	if err != nil {
		return nil, err
	}
	config, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	return &unpackedImage{rootfs: rootfs, entrypoint: config.Config.Entrypoint, env: config.Config.Env, workingDir: config.Config.WorkingDir}, nil
}

// program resolves a container's command and args against the image as a runtime
// does: no command means the image's entrypoint followed by the args; a program
// name without a slash is looked up in the image's PATH inside its rootfs.
func (img *unpackedImage) program(t *testing.T, command, args []string) (string, []string) {
	t.Helper()
	argv := append(slices.Clone(command), args...)
	if len(command) == 0 {
		argv = append(slices.Clone(img.entrypoint), args...)
	}
	require.NotEmpty(t, argv, "neither the container nor the image names a program")
	name := argv[0]
	if strings.Contains(name, "/") {
		return filepath.Join(img.rootfs, name), argv[1:]
	}
	for _, e := range img.env {
		if dirs, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, dir := range filepath.SplitList(dirs) {
				candidate := filepath.Join(img.rootfs, path.Join(dir, name))
				if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
					return candidate, argv[1:]
				}
			}
		}
	}
	require.FailNow(t, "program not in the image", "%s is not on the image's PATH (%q)", name, img.env)
	return "", nil
}

// environ is the image's environment with the container's variables over it.
func (img *unpackedImage) environ(container []string) []string {
	out := slices.Clone(img.env)
	for _, v := range container {
		name, _, _ := strings.Cut(v, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, v)
	}
	return out
}

// workdir is the image's working directory inside the unpacked rootfs.
func (img *unpackedImage) workdir() string {
	return filepath.Join(img.rootfs, img.workingDir)
}
