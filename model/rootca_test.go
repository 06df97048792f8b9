package model_test

import (
	"strings"
	"testing"
	"time"

	"github.com/meshscope/meshscope/internal/meshtest"
	"github.com/meshscope/meshscope/model"
)

func TestParseRootCerts(t *testing.T) {
	a, b := meshtest.SelfSigned(t, "root a", time.Now().AddDate(1, 0, 0)), meshtest.SelfSigned(t, "root b", time.Now().AddDate(0, 0, 5))
	certs, errText := model.ParseRootCerts(append(append([]byte{}, a...), b...))
	if errText != "" || len(certs) != 2 || certs[0].Subject != "CN=root a" || len(certs[0].Fingerprint) != 64 {
		t.Fatalf("certs %+v err %q", certs, errText)
	}
	if !model.SharesRoot(certs, certs[1:]) || model.SharesRoot(certs[:1], certs[1:]) {
		t.Error("SharesRoot")
	}
	if _, e := model.ParseRootCerts([]byte("not pem")); !strings.Contains(e, "no PEM certificate") {
		t.Errorf("garbage: %q", e)
	}
}
