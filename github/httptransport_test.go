package github_test

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arcflow/arcflow/github"
)

// A server signed by a private CA is reached once its certificate is given,
// and refused without it.
func TestTheTransportTrustsTheGivenCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

	plain, err := github.NewTransport("")
	require.NoError(t, err)
	_, err = (&http.Client{Transport: plain}).Get(srv.URL)
	require.Error(t, err, "an unknown CA is refused")

	trusting, err := github.NewTransport(caFile)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: trusting}).Get(srv.URL)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	require.NoError(t, os.WriteFile(caFile, []byte("not a certificate"), 0o600))
	_, err = github.NewTransport(caFile)
	require.ErrorContains(t, err, "holds no PEM certificate")
}
