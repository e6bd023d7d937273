package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/arcflow/arcflow/sim/localstack"
	"github.com/arcflow/arcflow/sim/world"
	"github.com/arcflow/arcflow/tools/image"
	"github.com/arcflow/arcflow/workflows/contract"
)

// maxImageSize bounds the compressed image a node pulls: arcflow (about 22 MB
// compressed for amd64) and arcflow-webhook (about 13 MB), which a node pulls
// once and which saves each webhook replica about 19 MiB of memory.
const maxImageSize = 40_000_000

// TestImageRunsTheWorkerOnTheStack builds the image as make image does, for this
// machine's platform only (make image adds linux/arm64; tools/image's tests
// check the two-platform index), then runs what ships: the binary unpacked from
// the image's layers, with the image's CA bundle, as `arcflow worker` against
// the local stack.
func TestImageRunsTheWorkerOnTheStack(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("builds the image and runs it on the stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root := repoRoot(t)
	meta, err := image.MetadataFromGit(ctx, root)
	require.NoError(t, err)
	platform := image.Platform("linux/" + runtime.GOARCH)
	res, err := image.Build(ctx, image.Options{
		OutDir: filepath.Join(t.TempDir(), "oci"), ModuleDir: root, Platforms: []image.Platform{platform}, Metadata: &meta,
	})
	require.NoError(t, err)
	require.Len(t, res.Images, 1)
	built := res.Images[0]
	require.Equal(t, platform, built.Platform)
	require.NoError(t, image.Verify(built.Image, platform, meta))
	t.Logf("%s image %s: %.1f MB compressed", platform, built.Digest, float64(built.CompressedSize)/1e6)
	require.Less(t, built.CompressedSize, int64(maxImageSize), "the compressed image stays under 40 MB")

	rootfs := t.TempDir()
	require.NoError(t, image.Unpack(res.Layout, platform, rootfs))
	binary := filepath.Join(rootfs, image.BinaryPath)
	requireStatic(t, binary)

	out, err := exec.CommandContext(ctx, binary, "version").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "arcflow "+meta.Version+"\n", string(out), "the binary carries the stamped version")

	bundle := filepath.Join(rootfs, image.CABundlePath)
	requireDebianCABundle(t, bundle)

	runImageWorker(t, ctx, rootfs)
}

// requireStatic: no ELF interpreter and no shared library, so the binary runs
// in an image without a libc.
func requireStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "the binary asks for a dynamic loader")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs)
	require.Nil(t, f.Section(".symtab"), "-s strips the symbol table")
}

// requireDebianCABundle: the image's bundle is the Debian package's file and
// holds a real set of CA certificates.
func requireDebianCABundle(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	host, err := os.ReadFile(image.CABundlePath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(host, data), "the image carries the host's Debian bundle unchanged")
	certs := 0
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		_, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		certs++
	}
	require.Greater(t, certs, 100, "Mozilla's root set as Debian ships it")
}

// runImageWorker starts `arcflow worker` from the unpacked image with the
// image's CA bundle and waits until it serves /healthz, holds its Lease in the
// API server and polls arcflow's task queue in Temporal.
func runImageWorker(t *testing.T, ctx context.Context, rootfs string) {
	binary, bundle := filepath.Join(rootfs, image.BinaryPath), filepath.Join(rootfs, image.CABundlePath)
	ns := "image"
	createNamespace(t, ctx, ns)
	useTemporalNamespace(t, ctx, ns)
	ports, err := localstack.FreePorts(1)
	require.NoError(t, err)
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	leaseID := "arcflow-image-test"

	var output bytes.Buffer
	cmd := exec.Command(binary, "worker", "--metrics-addr="+metrics, "--enable-leader-election",
		"--leader-election-id="+leaseID, "--leader-election-namespace="+ns, "--watch-namespace="+ns, "--log-level=info")
	// Only what the Deployment gives the container, plus the stack's addresses:
	// no HOME, no PATH, nothing of this machine's environment.
	cmd.Env = append(stack.Env(), "TEMPORAL_NAMESPACE="+ns, "SSL_CERT_FILE="+bundle, "GITHUB_TOKEN=ghp_image_test", "POD_NAMESPACE="+ns)
	cmd.Dir = rootfs
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("arcflow worker from the image:\n%s", output.String())
		}
	})

	kube, err := stack.Kube()
	require.NoError(t, err)
	tc := dialTemporal(t, ns)
	hostname, err := os.Hostname()
	require.NoError(t, err)
	pid := cmd.Process.Pid

	// None of the three notifies: poll them, with a deadline.
	deadline := time.After(time.Minute)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var healthy, leading, polling bool
	for !(healthy && leading && polling) {
		select {
		case <-exited:
			t.Fatalf("arcflow worker from the image exited: %v", exitErr)
		case <-deadline:
			t.Fatalf("after a minute: /healthz %v, Lease held %v, polling Temporal %v", healthy, leading, polling)
		case <-tick.C:
		}
		healthy = healthy || get200(ctx, "http://"+metrics+"/healthz")
		if lease, err := kube.CoordinationV1().Leases(ns).Get(ctx, leaseID, metav1.GetOptions{}); err == nil && lease.Spec.HolderIdentity != nil {
			require.Equal(t, fmt.Sprintf("%s-%d", hostname, pid), *lease.Spec.HolderIdentity)
			leading = true
		}
		if resp, err := tc.DescribeTaskQueue(ctx, contract.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW); err == nil {
			for _, p := range resp.GetPollers() {
				polling = polling || world.IsProcess(p.GetIdentity(), pid)
			}
		}
	}
}

func get200(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
