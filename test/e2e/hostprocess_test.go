package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// hostProcess is a hostContainer running on this host.
type hostProcess struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// start logs the transcript (rendered args and env, mapped paths, overrides, the
// command line) and runs the container from the unpacked image: its program and
// args, the image's environment with exactly the container's over it, in the
// image's working directory. The process gets SIGTERM when the test ends, like a
// pod being deleted.
func (c *hostContainer) start(img *unpackedImage) *hostProcess {
	t := c.t
	name := c.deployment.Namespace + "/" + c.deployment.Name + "/" + c.spec.Name
	t.Logf("%s rendered args: %q", name, append(c.spec.Command, c.spec.Args...))
	t.Logf("%s rendered env: %q", name, c.renderedEnvShown())
	for _, m := range c.mapped {
		t.Logf("%s mounted file: %s", name, m)
	}
	for _, o := range c.overrides {
		t.Logf("%s override: %s", name, o.detail)
	}
	bin, args := img.program(t, c.command, c.args)
	t.Logf("%s started: cd %s && env -i %s %s %s", name, img.workdir(), strings.Join(img.environ(c.shownEnv()), " "), bin, strings.Join(args, " "))

	p := &hostProcess{name: name, log: filepath.Join(t.TempDir(), c.spec.Name+".log"), exited: make(chan struct{})}
	out, err := os.Create(p.log)
	require.NoError(t, err)
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = img.environ(c.environ())
	p.cmd.Dir = img.workdir()
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start(), name)
	go func() {
		_ = p.cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.output())
		}
	})
	return p
}

// renderedEnvShown lists the container's env as rendered: values, or where they come from.
func (c *hostContainer) renderedEnvShown() []string {
	var out []string
	for _, from := range c.spec.EnvFrom {
		switch {
		case from.SecretRef != nil:
			out = append(out, fmt.Sprintf("envFrom secret %s", from.SecretRef.Name))
		case from.ConfigMapRef != nil:
			out = append(out, fmt.Sprintf("envFrom configmap %s", from.ConfigMapRef.Name))
		}
	}
	for _, v := range c.spec.Env {
		switch from := v.ValueFrom; {
		case from == nil:
			out = append(out, v.Name+"="+v.Value)
		case from.SecretKeyRef != nil:
			out = append(out, fmt.Sprintf("%s=<secret %s/%s>", v.Name, from.SecretKeyRef.Name, from.SecretKeyRef.Key))
		case from.ConfigMapKeyRef != nil:
			out = append(out, fmt.Sprintf("%s=<configmap %s/%s>", v.Name, from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key))
		case from.FieldRef != nil:
			out = append(out, fmt.Sprintf("%s=<field %s>", v.Name, from.FieldRef.FieldPath))
		}
	}
	return out
}

// stop sends SIGTERM, so the worker gives up its Lease, and SIGKILL after 10 s.
func (p *hostProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *hostProcess) output() string {
	data, _ := os.ReadFile(p.log)
	return string(data)
}

// waitReady polls url until it answers 200, failing at once if the process exits.
func (p *hostProcess) waitReady(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := http.Get(url); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("%s ready: GET %s -> %d", p.name, url, resp.StatusCode)
				return
			}
		}
		select {
		case <-p.exited:
			require.FailNow(t, p.name+" exited before it was ready", p.output())
		case <-ctx.Done():
			require.FailNow(t, p.name+" never answered "+url, p.output())
		case <-tick.C:
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as a
// ServiceAccount with a token from the TokenRequest API, so the API server
// authorizes the process with that account's RBAC, as in a pod.
func serviceAccountKubeconfig(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, name string) string {
	t.Helper()
	expiry := int64(time.Hour / time.Second)
	token, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	require.NoError(t, err, "token for serviceaccount %s/%s", ns, name)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["stack"] = &clientcmdapi.Cluster{Server: stack.RESTConfig.Host, CertificateAuthorityData: stack.RESTConfig.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	kc.Contexts["stack"] = &clientcmdapi.Context{Cluster: "stack", AuthInfo: name, Namespace: ns}
	kc.CurrentContext = "stack"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}
