package localstack

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

// clusterHistoryShards is the cluster's shard count. Production clusters use
// hundreds; four already spreads workflows over shards with separate task queues
// and locks, which is what the single-shard dev server never exercises.
const clusterHistoryShards = 4

// clusterConfig fills serverConfigTemplate.
type clusterConfig struct {
	Shards   int
	Postgres *postgres
	// Ports by service: gRPC and membership (ringpop).
	Frontend, History, Matching, Worker servicePorts
	FrontendHTTP, Metrics               int
	DynamicConfig                       string
}

type servicePorts struct{ GRPC, Membership int }

// serverConfigTemplate is temporal-server's static configuration as a cluster
// would have it: PostgreSQL for the history store and for advanced visibility,
// every service with its own ports, Prometheus metrics, archival off.
var serverConfigTemplate = template.Must(template.New("temporal-server").Parse(`log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: {{.Shards}}
  datastores:
    postgres-default:
      sql:
        pluginName: postgres12
        databaseName: temporal
        connectAddr: "127.0.0.1:{{.Postgres.Port}}"
        connectProtocol: tcp
        user: "{{.Postgres.User}}"
        password: "{{.Postgres.Password}}"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: postgres12
        databaseName: temporal_visibility
        connectAddr: "127.0.0.1:{{.Postgres.Port}}"
        connectProtocol: tcp
        user: "{{.Postgres.User}}"
        password: "{{.Postgres.Password}}"
        maxConns: 4
        maxIdleConns: 4
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:{{.Metrics}}"
services:
  frontend:
    rpc:
      grpcPort: {{.Frontend.GRPC}}
      membershipPort: {{.Frontend.Membership}}
      httpPort: {{.FrontendHTTP}}
      bindOnIP: 127.0.0.1
  history:
    rpc:
      grpcPort: {{.History.GRPC}}
      membershipPort: {{.History.Membership}}
      bindOnIP: 127.0.0.1
  matching:
    rpc:
      grpcPort: {{.Matching.GRPC}}
      membershipPort: {{.Matching.Membership}}
      bindOnIP: 127.0.0.1
  worker:
    rpc:
      grpcPort: {{.Worker.GRPC}}
      membershipPort: {{.Worker.Membership}}
      bindOnIP: 127.0.0.1
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:{{.Frontend.GRPC}}"
      httpAddress: "127.0.0.1:{{.FrontendHTTP}}"
dcRedirectionPolicy:
  policy: noop
archival:
  history:
    state: disabled
  visibility:
    state: disabled
namespaceDefaults:
  archival:
    history:
      state: disabled
    visibility:
      state: disabled
dynamicConfigClient:
  filepath: "{{.DynamicConfig}}"
  pollInterval: 10s
`))

// writeServerConfig writes <root>/config/arcflow.yaml (the server loads
// <config dir>/<env>.yaml) and the dynamic config file beside it, with dynamic
// (key to JSON value) as unconstrained values. The config holds the database
// password, so only this user may read it.
func writeServerConfig(root string, cfg clusterConfig, dynamic map[string]string) error {
	dir := filepath.Join(root, "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("temporal-server config: %w", err)
	}
	cfg.DynamicConfig = filepath.Join(dir, "dynamicconfig.yaml")
	values := "{}\n" // an empty mapping: no overrides
	if len(dynamic) > 0 {
		var b strings.Builder
		for _, key := range slices.Sorted(maps.Keys(dynamic)) {
			// JSON is YAML, so a JSON value needs no conversion.
			fmt.Fprintf(&b, "%s:\n  - value: %s\n", key, dynamic[key])
		}
		values = b.String()
	}
	if err := os.WriteFile(cfg.DynamicConfig, []byte(values), 0o600); err != nil {
		return fmt.Errorf("temporal-server dynamic config: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, clusterConfigEnv+".yaml"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("temporal-server config: %w", err)
	}
	if err := serverConfigTemplate.Execute(f, cfg); err != nil {
		_ = f.Close()
		return fmt.Errorf("temporal-server config: %w", err)
	}
	return f.Close()
}
