package localstack

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/util/wait"
)

func (s *Stack) startTemporal(ctx context.Context, tools string, opts Options) error {
	bin, err := tool(tools, "temporal")
	if err != nil {
		return err
	}
	ports, err := FreePorts(4)
	if err != nil {
		return err
	}
	grpcPort, uiPort, httpPort, metricsPort := ports[0], ports[1], ports[2], ports[3]
	args := []string{
		"server", "start-dev",
		"--ip=127.0.0.1",
		"--port=" + strconv.Itoa(grpcPort),
		"--http-port=" + strconv.Itoa(httpPort),
		"--metrics-port=" + strconv.Itoa(metricsPort),
		"--log-level=warn",
	}
	s.TemporalMetricsURL = "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics"
	if opts.TemporalUI {
		args = append(args, "--ui-ip=127.0.0.1", "--ui-port="+strconv.Itoa(uiPort))
		s.TemporalUIAddress = "http://127.0.0.1:" + strconv.Itoa(uiPort)
	} else {
		args = append(args, "--headless")
	}
	if opts.TemporalDB {
		s.temporalStore = filepath.Join(s.Dir, "temporal.db")
		args = append(args, sqliteStoreFlags(s.temporalStore)...)
	}
	args = append(args, keyValueFlags("--search-attribute", opts.SearchAttributes)...)
	args = append(args, keyValueFlags("--dynamic-config-value", opts.TemporalDynamicConfig)...)
	if err := s.start("temporal", bin, args...); err != nil {
		return err
	}
	s.TemporalAddress = "127.0.0.1:" + strconv.Itoa(grpcPort)
	return s.waitTemporalServing(ctx, 60*time.Second)
}

// sqliteStoreFlags keep the dev server's state in a SQLite file, so workflows
// survive a restart; WAL makes it about 3x faster.
func sqliteStoreFlags(db string) []string {
	return []string{"--db-filename=" + db, "--sqlite-pragma=journal_mode=wal", "--sqlite-pragma=synchronous=normal"}
}

// keyValueFlags are flag=key=value for each entry of m, in key order.
func keyValueFlags(flag string, m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	flags := make([]string, 0, len(keys))
	for _, key := range keys {
		flags = append(flags, flag+"="+key+"="+m[key])
	}
	return flags
}

func (s *Stack) waitTemporalServing(ctx context.Context, timeout time.Duration) error {
	return waitTemporalServing(ctx, s.TemporalAddress, s.anyExited, timeout)
}

// waitTemporalServing waits until the Temporal server at address answers its
// health check; exited reports a server process that died meanwhile.
func waitTemporalServing(ctx context.Context, address string, exited func() error, timeout time.Duration) error {
	// Nothing announces that the server is serving; retry the health check.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := exited(); err != nil {
			return false, err
		}
		c, err := client.Dial(client.Options{HostPort: address, Logger: quietLogger{}})
		if err != nil {
			return false, nil
		}
		defer c.Close()
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("temporal server not serving at %s: %w", address, err)
	}
	return nil
}

// quietLogger drops the SDK's connection-retry noise while the server starts.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
