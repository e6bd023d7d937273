package fullpath

// RunnerDeployment scales a RunnerDeployment named app between 0 and 4 replicas
// from workflow_job webhooks; its autoscaler is also named app.
const RunnerDeployment = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerDeployment
metadata:
  name: app
spec:
  template:
    spec:
      repository: octo-org/app
      labels: [linux, build]
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: app
spec:
  scaleTargetRef:
    name: app
  minReplicas: 0
  maxReplicas: 4
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`

// RunnerSet does the same for an organization RunnerSet named builders.
const RunnerSet = `apiVersion: actions.summerwind.dev/v1alpha1
kind: RunnerSet
metadata:
  name: builders
spec:
  organization: octo-org
  labels: [linux, build]
  selector:
    matchLabels:
      app: builders
  serviceName: builders
  template:
    metadata:
      labels:
        app: builders
    spec:
      containers:
      - name: runner
        image: summerwind/actions-runner:latest
---
apiVersion: actions.summerwind.dev/v1alpha1
kind: HorizontalRunnerAutoscaler
metadata:
  name: builders
spec:
  scaleTargetRef:
    kind: RunnerSet
    name: builders
  minReplicas: 0
  maxReplicas: 4
  scaleDownDelaySecondsAfterScaleOut: 5
  scaleUpTriggers:
  - githubEvent:
      workflowJob: {}
    duration: 30m
`
