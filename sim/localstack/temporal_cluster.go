package localstack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Temporal servers a stack can run (Options.TemporalServer).
const (
	// TemporalDev is the Temporal CLI's dev server: one process, SQLite or memory.
	TemporalDev = "dev"
	// TemporalCluster is temporal-server with its frontend, history, matching and
	// worker services, PostgreSQL for persistence and visibility, and several
	// history shards: the shape of a self-hosted production cluster.
	TemporalCluster = "cluster"
)

// TemporalServerEnv chooses the Temporal server of `make up`, `make demo`, `make
// bench` and `make chaos` (the Makefile sets it from TEMPORAL=dev|cluster).
const TemporalServerEnv = "ARCFLOW_TEMPORAL"

// TemporalServerFromEnv is $ARCFLOW_TEMPORAL, TemporalDev when unset.
func TemporalServerFromEnv() string {
	if v := os.Getenv(TemporalServerEnv); v != "" {
		return v
	}
	return TemporalDev
}

// clusterConfigEnv names the server's config file (<root>/config/<env>.yaml).
const clusterConfigEnv = "arcflow"

// clusterDatabases are the two databases and the schema directory of each, under
// schema/postgresql/v12/ in the server's module.
var clusterDatabases = []struct{ name, schema string }{
	{"temporal", "temporal"},
	{"temporal_visibility", "visibility"},
}

// startTemporalCluster starts PostgreSQL, creates and migrates Temporal's
// databases, starts temporal-server and registers the namespace and the search
// attributes arcflow needs.
func (s *Stack) startTemporalCluster(ctx context.Context, tools string, opts Options) error {
	if opts.TemporalUI {
		return errors.New("the Temporal Web UI comes with the dev server only; a cluster runs without it")
	}
	server, err := tool(tools, "temporal-server")
	if err != nil {
		return err
	}
	sqlTool, err := tool(tools, "temporal-sql-tool")
	if err != nil {
		return err
	}
	schemas, err := clusterSchemaDir(server)
	if err != nil {
		return err
	}
	pg, err := s.startPostgres(ctx, tools)
	if err != nil {
		return err
	}
	for _, db := range clusterDatabases {
		if err := setupDatabase(ctx, sqlTool, pg, db.name, filepath.Join(schemas, db.schema, "versioned")); err != nil {
			return err
		}
	}
	// One reservation, so no two ports coincide; all are below 32768, as the
	// membership table keeps ringpop ports in a smallint.
	all, err := FreePorts(10)
	if err != nil {
		return err
	}
	ports, membership := all[:6], all[6:]
	root := filepath.Join(s.Dir, "temporal-server")
	if err := writeServerConfig(root, clusterConfig{
		Shards: clusterHistoryShards, Postgres: pg,
		Frontend: servicePorts{ports[0], membership[0]}, History: servicePorts{ports[1], membership[1]},
		Matching: servicePorts{ports[2], membership[2]}, Worker: servicePorts{ports[3], membership[3]},
		FrontendHTTP: ports[4], Metrics: ports[5],
	}, opts.TemporalDynamicConfig); err != nil {
		return err
	}
	args := []string{"--root", root, "--config", "config", "--env", clusterConfigEnv, "--allow-no-auth", "start"}
	for _, service := range []string{"frontend", "history", "matching", "worker"} {
		args = append(args, "--service="+service)
	}
	if err := s.start("temporal-server", server, args...); err != nil {
		return err
	}
	s.TemporalAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
	s.TemporalMetricsURL = "http://127.0.0.1:" + strconv.Itoa(ports[5]) + "/metrics"
	// The first start of a cluster also creates its system namespace and workflows
	// in PostgreSQL: allow it longer than the dev server.
	if err := s.waitTemporalServing(ctx, 2*time.Minute); err != nil {
		return err
	}
	return registerNamespace(ctx, s.TemporalAddress, clusterNamespace, opts.SearchAttributes)
}

// clusterSchemaDir is schema/postgresql/v12 beside the temporal-server binary,
// where scripts/tools.sh copies it from the server's module.
func clusterSchemaDir(server string) (string, error) {
	real, err := filepath.EvalSymlinks(server)
	if err != nil {
		return "", fmt.Errorf("find temporal-server: %w", err)
	}
	dir := filepath.Join(filepath.Dir(real), "schema", "postgresql", "v12")
	if _, err := os.Stat(filepath.Join(dir, "temporal", "versioned")); err != nil {
		return "", fmt.Errorf("Temporal's PostgreSQL schema is missing beside temporal-server: run `make tools`: %w", err)
	}
	return dir, nil
}

// setupDatabase creates a database and migrates it to the newest schema version,
// the way an operator installs a cluster: create-database, setup-schema at 0.0
// (only the version tables), then update-schema through every versioned step.
// The password travels in SQL_PASSWORD, not on the command line.
func setupDatabase(ctx context.Context, sqlTool string, pg *postgres, name, versioned string) error {
	common := []string{"--endpoint", "127.0.0.1", "--port", strconv.Itoa(pg.Port), "--user", pg.User,
		"--plugin", "postgres12", "--database", name}
	for _, step := range [][]string{
		{"create-database"},
		{"setup-schema", "--version", "0.0"},
		{"update-schema", "--schema-dir", versioned},
	} {
		cmd := exec.CommandContext(ctx, sqlTool, append(common, step...)...)
		cmd.Env = append(os.Environ(), "SQL_PASSWORD="+pg.Password)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("temporal-sql-tool %s on database %s: %w: %s", step[0], name, err,
				strings.ReplaceAll(string(out), pg.Password, "<password>"))
		}
	}
	return nil
}
