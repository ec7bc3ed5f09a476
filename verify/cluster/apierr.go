package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Why a request to the API server failed, as an operator fixes it: nothing
// listens (refused), no answer in time (timeout), the server's certificate
// was not accepted (tls), the server name does not resolve (dns), the
// credentials were refused (auth), or anything else.
const (
	failRefused = "refused"
	failTimeout = "timeout"
	failTLS     = "tls"
	failDNS     = "dns"
	failAuth    = "auth"
	failOther   = "other"
)

// failureKind classifies err by the error types client-go passes up
// (wrapped *url.Error, *net.OpError, syscall errors, x509 errors, API
// status errors), then by their text for wrappers that do not keep the
// chain.
func failureKind(err error) string {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var dnsErr *net.DNSError
	var netErr net.Error
	msg := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(msg, "connection refused"):
		return failRefused
	case errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr) || errors.As(err, &invalid) ||
		strings.Contains(msg, "x509: ") || strings.Contains(msg, "tls: "):
		return failTLS
	case errors.As(err, &dnsErr) || strings.Contains(msg, "no such host"):
		return failDNS
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return failAuth
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		strings.Contains(msg, "Client.Timeout exceeded") || strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "context deadline exceeded"):
		return failTimeout
	}
	return failOther
}

// serverFailure words a failed first request to the API server (its
// version) as what happened, with the fix for that case.
func serverFailure(env *Env, err error) (msg, remedy string) {
	s := env.Server
	switch failureKind(err) {
	case failRefused:
		return fmt.Sprintf("API server %s refused the connection: nothing listens at that address and port: %v", s, err),
			"kube-apiserver is not running or listens elsewhere: on the control plane, crictl ps -a --name kube-apiserver and journalctl -u kubelet; check the kubeconfig's server address and port (kubespray: kube_apiserver_port 6443, or the load balancer's loadbalancer_apiserver_port)"
	case failTimeout:
		return fmt.Sprintf("API server %s did not answer within %s (connection or answer timed out): %v", s, env.Timeout, err),
			"the address is not reachable from here or the server hangs: a firewall dropping port 6443, a load balancer without healthy back ends, or an overloaded kube-apiserver/etcd (on the control plane: crictl logs of kube-apiserver, etcdctl endpoint health)"
	case failTLS:
		return fmt.Sprintf("API server %s answered, but its TLS certificate was not accepted: %v", s, err),
			"use the kubeconfig's server address the API server certificate names (kubespray adds supplementary_addresses_in_ssl_keys to its SANs), or the kubeconfig kubespray wrote for this cluster (/etc/kubernetes/admin.conf on a control-plane host)"
	case failDNS:
		return fmt.Sprintf("API server %s: its host name does not resolve: %v", s, err),
			"use an address or a name this host resolves in the kubeconfig's server field (kubespray writes the first control-plane address, or apiserver_loadbalancer_domain_name with a load balancer)"
	case failAuth:
		return fmt.Sprintf("API server %s refused the kubeconfig's credentials: %v", s, err),
			"the client certificate or token is expired or not for this cluster: use /etc/kubernetes/admin.conf from a control-plane host (kubeadm certs check-expiration shows admin.conf's expiry)"
	}
	return fmt.Sprintf("API server %s could not be asked for its version: %v", s, err),
		"check that kube-apiserver runs on the control plane (crictl ps --name kube-apiserver; journalctl -u kubelet), that the kubeconfig's server address is reachable from here, and that its credentials are valid"
}

// errAPI wraps an API error with the call that failed and the server,
// saying whether the connection was refused, timed out or failed TLS.
func errAPI(env *Env, what string, err error) error {
	switch failureKind(err) {
	case failTimeout:
		return fmt.Errorf("%s at %s: no answer within the time limit: %w", what, env.Server, err)
	case failRefused:
		return fmt.Errorf("%s at %s: connection refused (nothing listens there): %w", what, env.Server, err)
	case failTLS:
		return fmt.Errorf("%s at %s: TLS certificate not accepted: %w", what, env.Server, err)
	}
	return fmt.Errorf("%s at %s: %w", what, env.Server, err)
}
