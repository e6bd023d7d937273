package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// RunnerConfig is what a runner registers as: its GitHub scope, labels and group,
// and how its container runs docker. Exactly one of enterprise, organization and
// repository is set.
type RunnerConfig struct {
	// +kubebuilder:validation:Pattern=`^[^/]+$`
	Enterprise string `json:"enterprise,omitempty"`
	// +kubebuilder:validation:Pattern=`^[^/]+$`
	Organization string `json:"organization,omitempty"`
	// Repository is owner/name.
	// +kubebuilder:validation:Pattern=`^[^/]+/[^/]+$`
	Repository string `json:"repository,omitempty"`

	Labels []string `json:"labels,omitempty"`
	Group  string   `json:"group,omitempty"`
	// Ephemeral runners take one job and exit. Nil means true, as in ARC.
	Ephemeral *bool  `json:"ephemeral,omitempty"`
	Image     string `json:"image,omitempty"`
	WorkDir   string `json:"workDir,omitempty"`

	DockerdWithinRunnerContainer *bool              `json:"dockerdWithinRunnerContainer,omitempty"`
	DockerEnabled                *bool              `json:"dockerEnabled,omitempty"`
	DockerMTU                    *int64             `json:"dockerMTU,omitempty"`
	DockerRegistryMirror         *string            `json:"dockerRegistryMirror,omitempty"`
	DockerVarRunVolumeSizeLimit  *resource.Quantity `json:"dockerVarRunVolumeSizeLimit,omitempty"`
	VolumeSizeLimit              *resource.Quantity `json:"volumeSizeLimit,omitempty"`
	VolumeStorageMedium          *string            `json:"volumeStorageMedium,omitempty"`

	// ContainerMode is "" (docker) or "kubernetes" (runner container hooks).
	// +kubebuilder:validation:Enum="";kubernetes
	ContainerMode string `json:"containerMode,omitempty"`

	GitHubAPICredentialsFrom *GitHubAPICredentialsFrom `json:"githubAPICredentialsFrom,omitempty"`
}

// GitHubAPICredentialsFrom names a Secret in the resource's namespace that holds
// per-resource GitHub credentials under ARC's key names.
type GitHubAPICredentialsFrom struct {
	SecretRef SecretReference `json:"secretRef,omitempty"`
}

// Ref is the Secret as "namespace/name" for a resource in namespace; "" when
// none is named (the worker's own credentials).
func (c *GitHubAPICredentialsFrom) Ref(namespace string) string {
	if c == nil || c.SecretRef.Name == "" {
		return ""
	}
	return namespace + "/" + c.SecretRef.Name
}

// SecretReference names a Secret in the same namespace.
type SecretReference struct {
	Name string `json:"name"`
}

// RunnerPodSpec holds the pod-level fields ARC passes through to runner pods.
type RunnerPodSpec struct {
	DockerdContainerResources corev1.ResourceRequirements `json:"dockerdContainerResources,omitempty"`
	DockerVolumeMounts        []corev1.VolumeMount        `json:"dockerVolumeMounts,omitempty"`
	DockerEnv                 []corev1.EnvVar             `json:"dockerEnv,omitempty"`
	// Containers replaces the default containers; the names runner and docker are
	// reserved and get ARC's defaults filled in.
	Containers                    []corev1.Container                `json:"containers,omitempty"`
	ImagePullPolicy               corev1.PullPolicy                 `json:"imagePullPolicy,omitempty"`
	Env                           []corev1.EnvVar                   `json:"env,omitempty"`
	EnvFrom                       []corev1.EnvFromSource            `json:"envFrom,omitempty"`
	Resources                     corev1.ResourceRequirements       `json:"resources,omitempty"`
	VolumeMounts                  []corev1.VolumeMount              `json:"volumeMounts,omitempty"`
	Volumes                       []corev1.Volume                   `json:"volumes,omitempty"`
	EnableServiceLinks            *bool                             `json:"enableServiceLinks,omitempty"`
	InitContainers                []corev1.Container                `json:"initContainers,omitempty"`
	NodeSelector                  map[string]string                 `json:"nodeSelector,omitempty"`
	ServiceAccountName            string                            `json:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken  *bool                             `json:"automountServiceAccountToken,omitempty"`
	SidecarContainers             []corev1.Container                `json:"sidecarContainers,omitempty"`
	SecurityContext               *corev1.PodSecurityContext        `json:"securityContext,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference     `json:"imagePullSecrets,omitempty"`
	Affinity                      *corev1.Affinity                  `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration               `json:"tolerations,omitempty"`
	PriorityClassName             string                            `json:"priorityClassName,omitempty"`
	TerminationGracePeriodSeconds *int64                            `json:"terminationGracePeriodSeconds,omitempty"`
	EphemeralContainers           []corev1.EphemeralContainer       `json:"ephemeralContainers,omitempty"`
	HostAliases                   []corev1.HostAlias                `json:"hostAliases,omitempty"`
	TopologySpreadConstraints     []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	RuntimeClassName              *string                           `json:"runtimeClassName,omitempty"`
	DnsPolicy                     corev1.DNSPolicy                  `json:"dnsPolicy,omitempty"`
	DnsConfig                     *corev1.PodDNSConfig              `json:"dnsConfig,omitempty"`
	WorkVolumeClaimTemplate       *WorkVolumeClaimTemplate          `json:"workVolumeClaimTemplate,omitempty"`
}

// WorkVolumeClaimTemplate describes the work volume of kubernetes container mode.
type WorkVolumeClaimTemplate struct {
	StorageClassName string `json:"storageClassName"`
	// +kubebuilder:validation:items:Enum=ReadWriteOnce;ReadWriteMany
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes"`
	Resources   corev1.VolumeResourceRequirements   `json:"resources"`
}

// RunnerSpec is a runner's configuration and pod: what a RunnerDeployment's
// template holds.
//
// +kubebuilder:validation:XValidation:rule="[has(self.enterprise) && size(self.enterprise) > 0, has(self.organization) && size(self.organization) > 0, has(self.repository) && size(self.repository) > 0].filter(x, x).size() == 1",message="exactly one of enterprise, organization and repository must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.containerMode) || self.containerMode != 'kubernetes' || has(self.workVolumeClaimTemplate)",message="containerMode kubernetes requires workVolumeClaimTemplate"
type RunnerSpec struct {
	RunnerConfig  `json:",inline"`
	RunnerPodSpec `json:",inline"`
}
