package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// hostContainer is one container of a Deployment read back from the API server,
// made into a host process: the container's args and the environment the kubelet
// would give it (values, Secret and ConfigMap keys, the downward API), with Secret
// volumes written under a temporary directory and paths into them mapped there.
// Anything else that cannot work on a host changes only through overrideFlag and
// setEnv, which record it, so a test can assert the list.
type hostContainer struct {
	t          *testing.T
	deployment *appsv1.Deployment
	spec       corev1.Container
	// command and args as the container has them; the image resolves the program.
	command, args []string
	env           []envVar
	// mounts maps a volume's mount path in the pod to the directory holding its files.
	mounts    map[string]string
	mapped    []string
	overrides []override
}

// override is one change the host needs: what changed and how, for the transcript.
type override struct{ name, detail string }

// envVar is one variable of the container; shown is what the transcript prints, so
// a Secret's value never reaches a log.
type envVar struct {
	name, value, shown string
}

// resolveContainer turns the named container of d into a hostContainer, reading
// Secrets and ConfigMaps from d's namespace the way the kubelet does.
func resolveContainer(t *testing.T, ctx context.Context, kube kubernetes.Interface, d *appsv1.Deployment, name string) *hostContainer {
	t.Helper()
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	require.GreaterOrEqual(t, i, 0, "deployment %s has no container %q", d.Name, name)
	c := &hostContainer{t: t, deployment: d, spec: d.Spec.Template.Spec.Containers[i], mounts: map[string]string{}}
	c.command, c.args = slices.Clone(c.spec.Command), slices.Clone(c.spec.Args)
	for _, arg := range append(c.command, c.args...) {
		require.NotContains(t, arg, "$(", "the kubelet would expand $(VAR) in %q; teach resolveContainer to", arg)
	}
	r := resolver{t: t, ctx: ctx, kube: kube, ns: d.Namespace}
	c.writeVolumes(r)
	for _, from := range c.spec.EnvFrom {
		c.addEnvFrom(r, from)
	}
	for _, v := range c.spec.Env {
		c.addEnv(r, v)
	}
	c.mapMountPaths()
	return c
}

// resolver reads what a pod's spec refers to from its namespace.
type resolver struct {
	t    *testing.T
	ctx  context.Context
	kube kubernetes.Interface
	ns   string
}

// secret returns a Secret's data, or nil when it is missing and optional (the
// kubelet refuses to start a container whose required Secret is missing).
func (r resolver) secret(name string, optional *bool) map[string][]byte {
	s, err := r.kube.CoreV1().Secrets(r.ns).Get(r.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil
	}
	require.NoError(r.t, err, "secret %s/%s", r.ns, name)
	return s.Data
}

func (r resolver) configMap(name string, optional *bool) map[string]string {
	cm, err := r.kube.CoreV1().ConfigMaps(r.ns).Get(r.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return nil
	}
	require.NoError(r.t, err, "configmap %s/%s", r.ns, name)
	return cm.Data
}

func (c *hostContainer) addEnvFrom(r resolver, from corev1.EnvFromSource) {
	switch {
	case from.SecretRef != nil:
		for k, v := range r.secret(from.SecretRef.Name, from.SecretRef.Optional) {
			c.set(from.Prefix+k, string(v), fmt.Sprintf("<secret %s>", from.SecretRef.Name))
		}
	case from.ConfigMapRef != nil:
		for k, v := range r.configMap(from.ConfigMapRef.Name, from.ConfigMapRef.Optional) {
			c.set(from.Prefix+k, v, v)
		}
	}
}

func (c *hostContainer) addEnv(r resolver, v corev1.EnvVar) {
	t := c.t
	require.NotContains(t, v.Value, "$(", "the kubelet would expand $(VAR) in %s; teach resolveContainer to", v.Name)
	from := v.ValueFrom
	switch {
	case from == nil:
		c.set(v.Name, v.Value, v.Value)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		value, ok := r.secret(ref.Name, ref.Optional)[ref.Key]
		require.True(t, ok || optional, "%s: secret %s has no key %q and the reference is not optional", v.Name, ref.Name, ref.Key)
		if ok {
			c.set(v.Name, string(value), fmt.Sprintf("<secret %s/%s>", ref.Name, ref.Key))
		}
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		value, ok := r.configMap(ref.Name, ref.Optional)[ref.Key]
		require.True(t, ok || (ref.Optional != nil && *ref.Optional), "%s: configmap %s has no key %q", v.Name, ref.Name, ref.Key)
		if ok {
			c.set(v.Name, value, value)
		}
	case from.FieldRef != nil:
		var value string
		switch from.FieldRef.FieldPath {
		case "metadata.namespace":
			value = c.deployment.Namespace
		case "metadata.name":
			value = c.deployment.Name + "-host"
		case "spec.serviceAccountName":
			value = c.deployment.Spec.Template.Spec.ServiceAccountName
		default:
			require.Failf(t, "unsupported field reference", "%s: %s", v.Name, from.FieldRef.FieldPath)
		}
		c.set(v.Name, value, value)
	default:
		require.Failf(t, "unsupported env source", "%s", v.Name)
	}
}

// set adds or replaces a variable; later definitions win, as in the kubelet.
func (c *hostContainer) set(name, value, shown string) {
	if i := slices.IndexFunc(c.env, func(e envVar) bool { return e.name == name }); i >= 0 {
		c.env[i] = envVar{name, value, shown}
		return
	}
	c.env = append(c.env, envVar{name, value, shown})
}

// writeVolumes writes every Secret volume the container mounts to a directory of
// its own, one file per key (or per listed item), as the kubelet projects it.
func (c *hostContainer) writeVolumes(r resolver) {
	t := c.t
	for _, m := range c.spec.VolumeMounts {
		i := slices.IndexFunc(c.deployment.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		require.GreaterOrEqual(t, i, 0, "mount %s names no volume", m.Name)
		vol := c.deployment.Spec.Template.Spec.Volumes[i]
		require.NotNil(t, vol.Secret, "volume %s: only Secret volumes are supported on the host", vol.Name)
		dir := filepath.Join(t.TempDir(), vol.Name)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		data := r.secret(vol.Secret.SecretName, vol.Secret.Optional)
		files := map[string]string{}
		for k := range data {
			files[k] = k
		}
		if len(vol.Secret.Items) > 0 {
			files = map[string]string{}
			for _, item := range vol.Secret.Items {
				files[item.Key] = item.Path
			}
		}
		for key, path := range files {
			value, ok := data[key]
			require.True(t, ok, "volume %s: secret %s has no key %q", vol.Name, vol.Secret.SecretName, key)
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(dir, path), value, 0o600))
		}
		c.mounts[m.MountPath] = dir
	}
}

// mapMountPaths points args and variables that name a file under a mount path at
// the same file under the volume's host directory.
func (c *hostContainer) mapMountPaths() {
	for mountPath, dir := range c.mounts {
		mapPath := func(s string) (string, bool) {
			if s == mountPath || strings.HasPrefix(s, mountPath+"/") {
				return dir + strings.TrimPrefix(s, mountPath), true
			}
			// --flag=/mount/path/file
			if name, path, ok := strings.Cut(s, "="); ok && (path == mountPath || strings.HasPrefix(path, mountPath+"/")) {
				return name + "=" + dir + strings.TrimPrefix(path, mountPath), true
			}
			return s, false
		}
		for i, arg := range c.args {
			if mappedArg, ok := mapPath(arg); ok {
				c.mapped = append(c.mapped, fmt.Sprintf("arg %s -> %s", arg, mappedArg))
				c.args[i] = mappedArg
			}
		}
		for i, v := range c.env {
			if value, ok := mapPath(v.value); ok {
				c.mapped = append(c.mapped, fmt.Sprintf("%s=%s -> %s", v.name, v.value, value))
				c.env[i].value, c.env[i].shown = value, value
			}
		}
	}
}

// overrideFlag replaces the value of the rendered --flag=value argument, which must
// appear exactly once, and returns the rendered value.
func (c *hostContainer) overrideFlag(flag, value, why string) string {
	t := c.t
	var at []int
	for i, arg := range c.args {
		if strings.HasPrefix(arg, flag+"=") {
			at = append(at, i)
		}
	}
	require.Len(t, at, 1, "%s/%s renders %s once: %q", c.deployment.Name, c.spec.Name, flag, c.args)
	rendered := strings.TrimPrefix(c.args[at[0]], flag+"=")
	c.args[at[0]] = flag + "=" + value
	c.overrides = append(c.overrides, override{flag, fmt.Sprintf("%s=%s -> %s=%s (%s)", flag, rendered, flag, value, why)})
	return rendered
}

// setEnv sets a variable the pod would get another way.
func (c *hostContainer) setEnv(name, value, why string) {
	c.set(name, value, value)
	c.overrides = append(c.overrides, override{name, fmt.Sprintf("%s=%s (%s)", name, value, why)})
}

// overridden names what overrideFlag and setEnv changed, in order.
func (c *hostContainer) overridden() []string {
	names := make([]string, len(c.overrides))
	for i, o := range c.overrides {
		names[i] = o.name
	}
	return names
}

// lookup returns a variable of the resolved environment, or "".
func (c *hostContainer) lookup(name string) string {
	if i := slices.IndexFunc(c.env, func(e envVar) bool { return e.name == name }); i >= 0 {
		return c.env[i].value
	}
	return ""
}

// environ is the process environment: the container's variables and nothing else.
func (c *hostContainer) environ() []string {
	out := make([]string, len(c.env))
	for i, v := range c.env {
		out[i] = v.name + "=" + v.value
	}
	return out
}

// shownEnv is the environment for the transcript, Secret values hidden.
func (c *hostContainer) shownEnv() []string {
	out := make([]string, len(c.env))
	for i, v := range c.env {
		out[i] = v.name + "=" + v.shown
	}
	return out
}

// readinessPath checks that the container's HTTP readiness probe targets the port
// the rendered listen flag binds, and returns the probe's path.
func (c *hostContainer) readinessPath(renderedAddr string) string {
	t := c.t
	probe := c.spec.ReadinessProbe
	require.True(t, probe != nil && probe.HTTPGet != nil, "%s has an HTTP readiness probe", c.spec.Name)
	port := probe.HTTPGet.Port.IntValue()
	if name := probe.HTTPGet.Port.StrVal; name != "" {
		i := slices.IndexFunc(c.spec.Ports, func(p corev1.ContainerPort) bool { return p.Name == name })
		require.GreaterOrEqual(t, i, 0, "readiness probe port %q is not a container port", name)
		port = int(c.spec.Ports[i].ContainerPort)
	}
	require.True(t, strings.HasSuffix(renderedAddr, fmt.Sprintf(":%d", port)),
		"%s listens on %s but its readiness probe asks port %d", c.spec.Name, renderedAddr, port)
	return probe.HTTPGet.Path
}
