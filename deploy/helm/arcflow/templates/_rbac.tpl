{{- /* The worker's rules on objects in the namespaces it watches: a
ClusterRole's for every namespace, a Role's in the watched one with
scope.singleNamespace. */ -}}
{{- define "arcflow.workerRules" -}}
- apiGroups: ["actions.summerwind.dev"]
  resources: ["runnerdeployments", "runnersets", "horizontalrunnerautoscalers"]
  verbs: ["get", "list", "watch"]
# The worker keeps a finalizer on each RunnerDeployment and RunnerSet until the
# pool's runners are unregistered from GitHub: it adds and removes it with an
# update or patch of the resource (and /finalizers, for clusters that enforce
# owner-reference permissions).
- apiGroups: ["actions.summerwind.dev"]
  resources: ["runnerdeployments", "runnersets"]
  verbs: ["update", "patch"]
- apiGroups: ["actions.summerwind.dev"]
  resources: ["runnerdeployments/finalizers", "runnersets/finalizers"]
  verbs: ["update"]
# `arcflow drain` (run in a worker pod) and a drained autoscaler hand queued
# jobs back to ARC as the HRA's spec.capacityReservations, ARC's own form.
- apiGroups: ["actions.summerwind.dev"]
  resources: ["horizontalrunnerautoscalers"]
  verbs: ["update"]
- apiGroups: ["actions.summerwind.dev"]
  resources: ["runnerdeployments/status", "runnersets/status", "horizontalrunnerautoscalers/status"]
  verbs: ["get", "patch", "update"]
# What ARC left when arcflow takes over (docs/migrating-from-arc.md): its
# Runners and RunnerReplicaSets are read, their finalizers removed and they
# are deleted once their runners are unregistered; ARC's pod finalizers too.
- apiGroups: ["actions.summerwind.dev"]
  resources: ["runners", "runnerreplicasets"]
  verbs: ["get", "list", "patch", "delete"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "delete", "patch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "create", "update", "patch", "delete"]
- apiGroups: ["apps"]
  resources: ["statefulsets"]
  verbs: ["get", "list", "watch", "create", "delete"]
# RunnerSet volume slots: claims that outlive a runner's StatefulSet, and
# the claims ARC's RunnerSets left, relabelled as slots (get, patch).
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "create", "patch", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if .Values.rbac.allowGrantingKubernetesContainerModePermissions }}
# containerMode: kubernetes: the worker gives each such pool a ServiceAccount
# and Role, and may grant only what it holds.
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["create"]
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["roles", "rolebindings"]
  verbs: ["create"]
- apiGroups: [""]
  resources: ["pods/exec"]
  verbs: ["get", "create"]
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "create", "delete"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["list"]
{{- end }}
{{- end -}}

{{- /* The namespace of ARC's Lease (arcController.lease), or nothing when the
guard is off or the value is malformed (the worker then refuses to start and
says why). */ -}}
{{- define "arcflow.arcLeaseNamespace" -}}
{{- $lease := .Values.arcController.lease -}}
{{- if contains "/" $lease -}}
{{- first (splitList "/" $lease) -}}
{{- end -}}
{{- end -}}
