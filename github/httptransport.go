package github

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// NewTransport is the network transport for GitHub's API and its Actions
// service: Go's default, which takes a proxy from HTTPS_PROXY, HTTP_PROXY and
// NO_PROXY, trusting beside the system's certificates those of the PEM file
// caFile when it is set (a GitHub Enterprise Server signed by a private CA).
func NewTransport(caFile string) (http.RoundTripper, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment
	if caFile == "" {
		return t, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("github CA certificates: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("github CA certificates: %s holds no PEM certificate", caFile)
	}
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}
