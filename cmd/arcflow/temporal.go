package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// temporalFlags are the Temporal client settings, under the temporal CLI's
// environment names, so one environment serves arcflow and `temporal`.
type temporalFlags struct {
	address, namespace, apiKey            string
	tls                                   bool
	certPath, keyPath, caPath, serverName string
	disableHostVerification               bool
}

func addTemporalFlags(fs *flag.FlagSet) *temporalFlags {
	t := &temporalFlags{}
	fs.StringVar(&t.address, "temporal-address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port (TEMPORAL_ADDRESS)")
	fs.StringVar(&t.namespace, "temporal-namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace (TEMPORAL_NAMESPACE)")
	fs.StringVar(&t.apiKey, "temporal-api-key", os.Getenv("TEMPORAL_API_KEY"), "API key, e.g. for Temporal Cloud (TEMPORAL_API_KEY); implies TLS")
	fs.BoolVar(&t.tls, "temporal-tls", envBool("TEMPORAL_TLS"), "connect with TLS (TEMPORAL_TLS)")
	fs.StringVar(&t.certPath, "temporal-tls-cert", os.Getenv("TEMPORAL_TLS_CLIENT_CERT_PATH"), "mTLS client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH)")
	fs.StringVar(&t.keyPath, "temporal-tls-key", os.Getenv("TEMPORAL_TLS_CLIENT_KEY_PATH"), "mTLS client key (TEMPORAL_TLS_CLIENT_KEY_PATH)")
	fs.StringVar(&t.caPath, "temporal-tls-ca", os.Getenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH"), "CA of the server certificate (TEMPORAL_TLS_SERVER_CA_CERT_PATH)")
	fs.StringVar(&t.serverName, "temporal-tls-server-name", os.Getenv("TEMPORAL_TLS_SERVER_NAME"), "server name to verify (TEMPORAL_TLS_SERVER_NAME)")
	fs.BoolVar(&t.disableHostVerification, "temporal-tls-disable-host-verification", envBool("TEMPORAL_TLS_DISABLE_HOST_VERIFICATION"), "skip server certificate verification (TEMPORAL_TLS_DISABLE_HOST_VERIFICATION)")
	return t
}

func envBool(name string) bool { return envBoolOr(name, false) }

// envBoolOr is the boolean in an environment variable, or def when it is
// unset or not a boolean.
func envBoolOr(name string, def bool) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	if err != nil {
		return def
	}
	return v
}

// options builds the SDK client options. Files are read here, so a bad path is a
// start-up error that names the flag.
func (t *temporalFlags) options(log *slog.Logger) (client.Options, error) {
	opts := client.Options{HostPort: t.address, Namespace: t.namespace, Logger: sdklog.NewStructuredLogger(log)}
	opts.ConnectionOptions.DialOptions = temporalReturnDialOptions()
	if t.apiKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(t.apiKey)
	}
	if !t.tls && t.apiKey == "" && t.certPath == "" && t.caPath == "" {
		return opts, nil
	}
	cfg := &tls.Config{ServerName: t.serverName, InsecureSkipVerify: t.disableHostVerification, MinVersion: tls.VersionTLS12} //nolint:gosec // the user asked for it
	if t.certPath != "" || t.keyPath != "" {
		cert, err := tls.LoadX509KeyPair(t.certPath, t.keyPath)
		if err != nil {
			return opts, fmt.Errorf("--temporal-tls-cert/--temporal-tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if t.caPath != "" {
		pem, err := os.ReadFile(t.caPath)
		if err != nil {
			return opts, fmt.Errorf("--temporal-tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return opts, fmt.Errorf("--temporal-tls-ca: no certificate in %s", t.caPath)
		}
		cfg.RootCAs = pool
	}
	opts.ConnectionOptions.TLS = cfg
	return opts, nil
}

// dial connects at once (the worker and the CLI commands need Temporal to work).
func (t *temporalFlags) dial(log *slog.Logger) (client.Client, error) {
	opts, err := t.options(log)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", t.address, err)
	}
	return c, nil
}
