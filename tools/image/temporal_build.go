package image

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// BuildTemporal compiles the pinned Temporal CLI for each platform from the Go
// module proxy (static: CGO_ENABLED=0, the CLI's SQLite is pure Go), assembles
// the Temporal image's index and writes it as an OCI image layout into
// opts.OutDir. opts.ModuleDir is not used; opts.Metadata, when set, gives the
// commit and time (its version becomes the CLI's).
func BuildTemporal(ctx context.Context, opts Options) (*Result, error) {
	if opts.OutDir == "" {
		return nil, fmt.Errorf("temporal image build: no output directory")
	}
	if len(opts.Platforms) == 0 {
		opts.Platforms = Platforms
	}
	if opts.CABundle == "" {
		opts.CABundle = CABundlePath
	}
	if opts.Metadata == nil {
		meta, err := MetadataFromGit(ctx, ".")
		if err != nil {
			return nil, err
		}
		opts.Metadata = &meta
	}
	meta := TemporalMetadata(*opts.Metadata)
	caBundle, err := readCABundle(opts.CABundle)
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "arcflow-temporal-image-")
	if err != nil {
		return nil, fmt.Errorf("temporal image build: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	binaries := map[Platform][]byte{}
	for _, p := range opts.Platforms {
		out := filepath.Join(work, "bin", strings.ReplaceAll(string(p), "/", "-"), "temporal")
		if err := CompileTemporalCLI(ctx, filepath.Join(work, "module"), p, out); err != nil {
			return nil, err
		}
		if err := CheckTemporalBinary(out, p); err != nil {
			return nil, err
		}
		if binaries[p], err = os.ReadFile(out); err != nil {
			return nil, fmt.Errorf("temporal image build: %w", err)
		}
	}
	idx, err := AssembleTemporal(meta, caBundle, binaries)
	if err != nil {
		return nil, fmt.Errorf("temporal image build: %w", err)
	}
	if err := WriteLayout(opts.OutDir, idx, meta.Version); err != nil {
		return nil, err
	}
	return describe(opts.OutDir, meta, idx)
}

// CompileTemporalCLI builds TemporalCLIPackage at TemporalCLIVersion for one
// platform into out. `go install pkg@version` cannot write a cross-compiled
// binary where it is told to, so the build runs in a module of its own, in
// moduleDir, that requires only the CLI: minimal version selection then picks
// exactly the CLI's own requirements, and the CLI's go.sum checks them. The
// version is stamped as the CLI's release builds stamp it.
func CompileTemporalCLI(ctx context.Context, moduleDir string, p Platform, out string) error {
	goos, goarch, err := p.Split()
	if err != nil {
		return err
	}
	if err := temporalModule(ctx, moduleDir); err != nil {
		return err
	}
	stamp := "-X " + TemporalCLIModule + "/temporalcli.Version=" + strings.TrimPrefix(TemporalCLIVersion, "v")
	cmd := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-trimpath", "-ldflags", "-s -w "+stamp, "-o", out, TemporalCLIPackage)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOWORK=off", "GOFLAGS=")
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s@%s for %s: %w\n%s", TemporalCLIPackage, TemporalCLIVersion, p, err, output)
	}
	return nil
}

// temporalModule writes the build module into dir once: a go.mod requiring the
// CLI and the CLI's own go.sum, fetched from the module proxy.
func temporalModule(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("temporal build module: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", TemporalCLIModule+"@"+TemporalCLIVersion)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	downloaded, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod download %s@%s: %w", TemporalCLIModule, TemporalCLIVersion, err)
	}
	var info struct{ Dir, GoMod string }
	if err := json.Unmarshal(downloaded, &info); err != nil {
		return fmt.Errorf("go mod download %s@%s: %w", TemporalCLIModule, TemporalCLIVersion, err)
	}
	sum, err := os.ReadFile(filepath.Join(info.Dir, "go.sum"))
	if err != nil {
		return fmt.Errorf("the CLI's go.sum: %w", err)
	}
	goMod := "module arcflow.invalid/temporal-image\n\ngo 1.25.0\n\nrequire " + TemporalCLIModule + " " + TemporalCLIVersion + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		return fmt.Errorf("temporal build module: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return fmt.Errorf("temporal build module: %w", err)
	}
	return nil
}

// CheckTemporalBinary reads the Go build information of a built temporal
// binary and checks it is the pinned CLI, static (CGO_ENABLED=0), for p.
func CheckTemporalBinary(path string, p Platform) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("temporal binary %s: %w", path, err)
	}
	goos, goarch, err := p.Split()
	if err != nil {
		return err
	}
	if info.Path != TemporalCLIPackage {
		return fmt.Errorf("temporal binary %s is %s, want %s", path, info.Path, TemporalCLIPackage)
	}
	// The main package's module is recorded as Main, even when built from
	// another module that requires it.
	version := ""
	for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
		if m.Path == TemporalCLIModule {
			version = m.Version
		}
	}
	if version != TemporalCLIVersion {
		return fmt.Errorf("temporal binary %s: %s is at %q, want %s", path, TemporalCLIModule, version, TemporalCLIVersion)
	}
	want := map[string]string{"CGO_ENABLED": "0", "GOOS": goos, "GOARCH": goarch}
	for _, s := range info.Settings {
		if w, ok := want[s.Key]; ok && s.Value == w {
			delete(want, s.Key)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("temporal binary %s: build settings %v are not %v (a static build for %s)", path, info.Settings, want, p)
	}
	return nil
}
