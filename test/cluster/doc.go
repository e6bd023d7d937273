// Package cluster runs arcflow's full path on a Temporal cluster shaped like a
// self-hosted production one: temporal-server with frontend, history, matching
// and worker services, several history shards, and PostgreSQL for persistence and
// visibility. test/e2e runs the same scenario on the dev server.
package cluster
