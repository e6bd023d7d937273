package localstack

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the files kube-apiserver needs: a CA, a serving certificate for
// 127.0.0.1, a service-account key pair and a static admin token.
type pki struct {
	caCert, servingCert, servingKey string
	saKey, saPub                    string
	tokenFile                       string
	caPEM                           []byte
	adminToken                      string
	// controllerManagerToken authenticates kube-controller-manager as the
	// user a cluster names it (system:kube-controller-manager), not as the
	// admin: policies that tell its garbage collector and namespace
	// controller from other clients (arcflow's busy-runner policy) see it as
	// they would in a real cluster.
	controllerManagerToken string
}

func writePKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pki dir: %w", err)
	}
	p := &pki{
		caCert:      filepath.Join(dir, "ca.crt"),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
		saPub:       filepath.Join(dir, "sa.pub"),
		tokenFile:   filepath.Join(dir, "tokens.csv"),
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "arcflow-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("ca cert: %w", err)
	}
	caParsed, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("ca cert: %w", err)
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("serving key: %w", err)
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, caParsed, &servingKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("serving cert: %w", err)
	}
	servingKeyDER, err := x509.MarshalECPrivateKey(servingKey)
	if err != nil {
		return nil, fmt.Errorf("serving key: %w", err)
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}

	tokenBytes := make([]byte, 16)
	if _, err := rand.Read(tokenBytes); err != nil {
		return nil, fmt.Errorf("admin token: %w", err)
	}
	p.adminToken = hex.EncodeToString(tokenBytes)
	if _, err := rand.Read(tokenBytes); err != nil {
		return nil, fmt.Errorf("controller-manager token: %w", err)
	}
	p.controllerManagerToken = hex.EncodeToString(tokenBytes)

	files := map[string][]byte{
		p.caCert:      p.caPEM,
		p.servingCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER}),
		p.servingKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: servingKeyDER}),
		p.saKey:       pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		p.saPub:       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
		p.tokenFile: []byte(p.adminToken + `,admin,admin,"system:masters"` + "\n" +
			p.controllerManagerToken + `,system:kube-controller-manager,system:kube-controller-manager,"system:masters"` + "\n"),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return p, nil
}
