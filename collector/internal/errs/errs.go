// Package errs turns the errors of reading clusters into data: a stable
// kind and a sentence a person can act on, with every known credential
// redacted. Both sides of the collector need it — the Registry for the
// kubeconfigs of remote secrets it plans with, the watchers for the
// list/watch and probe errors of the clusters they read — so it sits
// below both.
package errs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/meshscope/meshscope/model"
)

// Failure is an error turned into data: a stable kind and a sentence a
// person understands. It never carries credentials (see Redactor).
type Failure struct {
	Kind   model.ErrorKind
	Reason string
}

// Error lets a Failure travel as an error and be found again by Classify.
func (p Failure) Error() string { return p.Reason }

// Classify turns an error from client-go (or from parsing a kubeconfig)
// into a Failure. what names the thing being read ("services",
// "the API server") so that "forbidden" says what is forbidden.
func Classify(err error, what string) Failure {
	if err == nil {
		return Failure{}
	}
	var p Failure
	if errors.As(err, &p) {
		return p
	}
	switch {
	case apierrors.IsUnauthorized(err):
		return Failure{model.ErrUnauthorized, "unauthorized: the API server rejected the credentials (expired or revoked token?)"}
	case apierrors.IsForbidden(err):
		if what == "" {
			what = "the API server"
		}
		return Failure{model.ErrForbidden, "forbidden " + what + ": the user may not list/watch it"}
	}
	if k, msg, ok := classifyTLS(err); ok {
		return Failure{k, msg}
	}
	if isUnreachable(err) {
		return Failure{model.ErrUnreachable, "unreachable: " + shortNetError(err)}
	}
	return Failure{model.ErrOther, "error: " + OneLine(err.Error())}
}

func classifyTLS(err error) (model.ErrorKind, string, bool) {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &ua):
		return model.ErrTLS, "TLS/CA mismatch: the server's certificate is not signed by the kubeconfig's certificate authority", true
	case errors.As(err, &hn):
		return model.ErrTLS, "TLS/CA mismatch: " + OneLine(hn.Error()), true
	case errors.As(err, &ci):
		return model.ErrTLS, "TLS/CA mismatch: " + OneLine(ci.Error()), true
	case errors.As(err, &cv):
		return model.ErrTLS, "TLS/CA mismatch: " + OneLine(cv.Err.Error()), true
	case errors.As(err, &rh):
		return model.ErrTLS, "TLS/CA mismatch: the server does not speak TLS (http:// server behind https?)", true
	}
	// client-go sometimes flattens the chain into a string.
	s := err.Error()
	if strings.Contains(s, "x509: certificate signed by unknown authority") {
		return model.ErrTLS, "TLS/CA mismatch: the server's certificate is not signed by the kubeconfig's certificate authority", true
	}
	if strings.Contains(s, "x509:") || strings.Contains(s, "tls:") {
		return model.ErrTLS, "TLS/CA mismatch: " + OneLine(s), true
	}
	return "", "", false
}

func isUnreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var op *net.OpError
	var dns *net.DNSError
	var ne net.Error
	if errors.As(err, &op) || errors.As(err, &dns) || (errors.As(err, &ne) && ne.Timeout()) {
		return true
	}
	if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	s := err.Error()
	for _, frag := range []string{"connection refused", "no such host", "i/o timeout", "EOF", "connection reset", "no route to host", "network is unreachable", "http2: client connection lost", "context deadline exceeded"} {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}

// shortNetError keeps the useful end of a net error ("dial tcp
// 127.0.0.1:6444: connect: connection refused") and drops client-go's
// request URL prefix, which only repeats the server.
func shortNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time (API server down or blackholed?)"
	}
	return OneLine(err.Error())
}

// OneLine flattens a message onto one line of at most 300 bytes, cut at a
// character boundary.
func OneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > MaxLine {
		cut := MaxLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + Ellipsis
	}
	return s
}

// MaxLine and Ellipsis bound a Reason: a fuzz oracle of the collector
// holds every sentence to them.
const (
	MaxLine  = 300
	Ellipsis = "…"
)

// Redactor removes known secret strings (tokens, passwords, key and cert
// bodies) from text before it becomes a Reason or a log line. client-go
// does not put them in errors, but a kubeconfig parse error can quote its
// input, so every sentence that may contain user input passes through here.
// Secrets shorter than MinSecret are left alone (they would blank out
// ordinary words).
type Redactor []string

// MinSecret is the shortest secret redacted; Placeholder is what stands in
// a sentence for a redacted secret (so a test can tell what is left).
const (
	MinSecret   = 4
	Placeholder = "<redacted>"
)

// Clean marks every byte of s covered by an occurrence of a secret and
// replaces each marked run with one Placeholder, so the text left between
// placeholders is original text holding no whole secret however the
// secrets overlap (replacing them one after another could leave a tail of
// one secret joined to the next). A message already cut by OneLine may end
// in the first part of a secret: that part is marked too.
func (r Redactor) Clean(s string) string {
	var mark []bool
	set := func(from, to int) {
		if mark == nil {
			mark = make([]bool, len(s))
		}
		for k := from; k < to; k++ {
			mark[k] = true
		}
	}
	body, cut := strings.CutSuffix(s, Ellipsis)
	for _, secret := range r {
		if len(secret) < MinSecret {
			continue
		}
		for i := 0; i+len(secret) <= len(s); {
			j := strings.Index(s[i:], secret)
			if j < 0 {
				break
			}
			set(i+j, i+j+len(secret))
			i += j + 1
		}
		if cut {
			for k := min(len(secret)-1, len(body)); k >= MinSecret; k-- {
				if strings.HasSuffix(body, secret[:k]) {
					set(len(body)-k, len(body))
					break
				}
			}
		}
	}
	if mark == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !mark[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(Placeholder)
		for i < len(s) && mark[i] {
			i++
		}
	}
	return b.String()
}

// Redact is p with its sentence cleaned: a Reason may quote user input.
func (r Redactor) Redact(p Failure) Failure {
	p.Reason = r.Clean(p.Reason)
	return p
}

// Newf builds a Failure with a formatted sentence.
func Newf(kind model.ErrorKind, format string, args ...any) Failure {
	return Failure{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}
