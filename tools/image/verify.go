package image

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ExpectedFiles is everything an arcflow image holds, as Files lists it: users,
// groups, the CA bundle and the two binaries. No shell, no package manager.
var ExpectedFiles = []string{
	"etc/", "etc/group", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt",
	"home/", "home/nonroot/",
	"usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/arcflow", "usr/local/bin/arcflow-webhook",
}

// Verify checks that img is an arcflow image for platform p built with meta: its
// platform, user, entrypoint, environment, creation time, labels and exact file
// list. make image runs it on what it built; the tests run it too.
func Verify(img v1.Image, p Platform, meta Metadata) error {
	return verify(img, p, meta, meta.Labels(), Entrypoint, ExpectedFiles)
}

func verify(img v1.Image, p Platform, meta Metadata, labels map[string]string, entrypoint, expectedFiles []string) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	goos, goarch, err := p.Split()
	if err != nil {
		return err
	}
	var errs []error
	check := func(what string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			errs = append(errs, fmt.Errorf("%s is %v, want %v", what, got, want))
		}
	}
	check("platform", cfg.OS+"/"+cfg.Architecture, goos+"/"+goarch)
	check("user", cfg.Config.User, User)
	check("entrypoint", cfg.Config.Entrypoint, entrypoint)
	check("cmd", cfg.Config.Cmd, []string(nil))
	check("env", cfg.Config.Env, []string{PathEnv})
	check("created", cfg.Created.UTC(), meta.Created.UTC())
	check("rootfs type", cfg.RootFS.Type, "layers")
	for key, want := range labels {
		check("label "+key, cfg.Config.Labels[key], want)
	}
	if !strings.HasPrefix(cfg.Config.Labels[LabelCACertificates], "debian ca-certificates") {
		errs = append(errs, fmt.Errorf("label %s does not name Debian's ca-certificates", LabelCACertificates))
	}
	files, err := Files(img)
	if err != nil {
		return err
	}
	if !slices.Equal(files, expectedFiles) {
		errs = append(errs, fmt.Errorf("files are %v, want exactly %v", files, expectedFiles))
	}
	return errors.Join(errs...)
}
