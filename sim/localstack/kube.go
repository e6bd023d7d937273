package localstack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/arcflow/arcflow/sim/kubelet"
)

// FakeNodeName is the kwok node that runner pods are scheduled to.
const FakeNodeName = "kwok-node"

// kwokStages are kwok's own stage definitions (copied beside the binary by
// scripts/tools.sh): nodes become Ready and keep a heartbeat, pods become Running and
// Ready, and deleted pods go away at once.
var kwokStages = []string{
	"node/fast/node-initialize.yaml",
	"node/heartbeat/node-heartbeat.yaml",
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-delete.yaml",
}

func (s *Stack) startKubernetes(ctx context.Context, tools string) error {
	bins := map[string]string{}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		path, err := tool(tools, name)
		if err != nil {
			return err
		}
		bins[name] = path
	}
	ports, err := FreePorts(6)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, cmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	certs, err := writePKI(filepath.Join(s.Dir, "pki"))
	if err != nil {
		return err
	}

	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	if err := s.start("etcd", bins["etcd"],
		"--name=default",
		"--data-dir="+filepath.Join(s.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return err
	}

	if err := s.start("kube-apiserver", bins["kube-apiserver"],
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(apiPort),
		"--cert-dir="+filepath.Join(s.Dir, "pki"),
		"--tls-cert-file="+certs.servingCert, "--tls-private-key-file="+certs.servingKey,
		"--client-ca-file="+certs.caCert,
		"--token-auth-file="+certs.tokenFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+certs.saPub,
		"--service-account-signing-key-file="+certs.saKey,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--endpoint-reconciler-type=none",
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		// Pods are created right after their namespace in tests; without the
		// ServiceAccount plugin they need not wait for the default ServiceAccount.
		// Without TaintNodesByCondition the fake node is not born tainted not-ready
		// (no node-lifecycle controller runs to lift the taint).
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
	); err != nil {
		return err
	}

	s.RESTConfig = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(apiPort),
		BearerToken:     certs.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: certs.caPEM},
		QPS:             200,
		Burst:           400,
	}
	s.Kubeconfig = filepath.Join(s.Dir, "kubeconfig")
	if err := writeKubeconfig(s.Kubeconfig, s.RESTConfig); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(s.RESTConfig)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if err := s.waitAPIServerReady(ctx, client); err != nil {
		return err
	}

	cmConfig := rest.CopyConfig(s.RESTConfig)
	cmConfig.BearerToken = certs.controllerManagerToken
	cmKubeconfig := filepath.Join(s.Dir, "controller-manager.kubeconfig")
	if err := writeKubeconfig(cmKubeconfig, cmConfig); err != nil {
		return err
	}
	if err := s.start("kube-controller-manager", bins["kube-controller-manager"],
		"--kubeconfig="+cmKubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(cmPort),
		"--controllers=statefulset,garbagecollector,namespace,serviceaccount,persistentvolume-binder,ephemeral-volume,pvc-protection,pv-protection",
		"--pvclaimbinder-sync-period=2s", // claims bind in seconds, not the default 15 s
		"--service-account-private-key-file="+certs.saKey,
		"--root-ca-file="+certs.caCert,
	); err != nil {
		return err
	}
	if err := s.start("kube-scheduler", bins["kube-scheduler"],
		"--kubeconfig="+s.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort),
	); err != nil {
		return err
	}

	kwokConfig, err := writeKwokConfig(s.Dir, filepath.Join(filepath.Dir(tools), "kwok-stage"))
	if err != nil {
		return err
	}
	if err := s.start("kwok", bins["kwok"],
		"--kubeconfig="+s.Kubeconfig,
		"--config="+kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1",
		"--server-address=127.0.0.1:"+strconv.Itoa(kwokPort),
	); err != nil {
		return err
	}
	return s.createFakeNode(ctx, client)
}

func (s *Stack) waitAPIServerReady(ctx context.Context, client kubernetes.Interface) error {
	// The API server has no event to await before it serves; poll /readyz briefly.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := s.anyExited(); err != nil {
			return false, err
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver not ready: %w", err)
	}
	return nil
}

func (s *Stack) createFakeNode(ctx context.Context, client kubernetes.Interface) error {
	if _, err := client.CoreV1().Nodes().Create(ctx, kubelet.KwokNode(FakeNodeName, nil), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create fake node: %w", err)
	}
	if err := kubelet.WaitNodeReady(ctx, client, FakeNodeName); err != nil {
		return fmt.Errorf("kwok did not make %s Ready (is kwok running? see %s): %w", FakeNodeName, filepath.Join(s.Dir, "logs", "kwok.log"), err)
	}
	return nil
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["arcflow"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["arcflow"] = &clientcmdapi.Context{Cluster: "arcflow", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "arcflow"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

func writeKwokConfig(dir, stageDir string) (string, error) {
	var docs []string
	for _, rel := range kwokStages {
		data, err := os.ReadFile(filepath.Join(stageDir, rel))
		if err != nil {
			return "", fmt.Errorf("kwok stage %s (run `make tools`): %w", rel, err)
		}
		docs = append(docs, strings.TrimSpace(string(data)))
	}
	path := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write kwok config: %w", err)
	}
	return path, nil
}
