package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// KeyAlgorithm is the key type of generated certificates. kubeadm's
// encryptionAlgorithm accepts RSA-2048 (kubespray's default) and ECDSA-P256;
// make-ssl-etcd.sh makes RSA keys of certificates_key_size bits.
type KeyAlgorithm string

// Key algorithms.
const (
	ECDSAP256 KeyAlgorithm = "ECDSA-P256" // fast; the default for tests
	RSA2048   KeyAlgorithm = "RSA-2048"   // what kubespray v2.31.0 makes
)

// CA is a certificate authority of the tree: its certificate and key.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPEM is the CA certificate in PEM.
func (c *CA) CertPEM() []byte { return certPEM(c.Cert) }

// Leaf describes a certificate to issue.
type Leaf struct {
	CN        string
	Org       []string
	DNS       []string
	IPs       []net.IP
	NotBefore time.Time
	NotAfter  time.Time
	Client    bool
	Server    bool
	IsCA      bool
}

func newKey(alg KeyAlgorithm) (crypto.Signer, error) {
	if alg == RSA2048 {
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

var serialLimit = new(big.Int).Lsh(big.NewInt(1), 62)

func skid(pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha1.Sum(der)
	return sum[:]
}

// NewCA makes a self-signed CA valid from notBefore to notAfter.
func NewCA(alg KeyAlgorithm, cn string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := newKey(alg)
	if err != nil {
		return nil, err
	}
	serial, _ := rand.Int(rand.Reader, serialLimit)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notBefore.UTC(),
		NotAfter:              notAfter.UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          skid(key.Public()),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Issue signs a certificate for key (a new one when key is nil) with ca.
func (c *CA) Issue(alg KeyAlgorithm, l Leaf, key crypto.Signer) (*x509.Certificate, crypto.Signer, error) {
	if key == nil {
		var err error
		if key, err = newKey(alg); err != nil {
			return nil, nil, err
		}
	}
	serial, _ := rand.Int(rand.Reader, serialLimit)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: l.CN, Organization: l.Org},
		NotBefore:             l.NotBefore.UTC(),
		NotAfter:              l.NotAfter.UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  l.IsCA,
		DNSNames:              l.DNS,
		IPAddresses:           l.IPs,
		SubjectKeyId:          skid(key.Public()),
		AuthorityKeyId:        c.Cert.SubjectKeyId,
	}
	if l.IsCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	if l.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if l.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.Cert, key.Public(), c.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue %s: %w", l.CN, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// keyPEM encodes a key the way its maker writes it: PKCS#1 "RSA PRIVATE
// KEY" / SEC1 "EC PRIVATE KEY" (kubeadm) or PKCS#8 "PRIVATE KEY" (openssl
// in make-ssl-etcd.sh).
func keyPEM(k crypto.Signer, pkcs8 bool) ([]byte, error) {
	if pkcs8 {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	}
	return nil, fmt.Errorf("unsupported key type %T", k)
}
