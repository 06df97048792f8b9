package errs

import (
	"errors"
	"testing"

	"github.com/meshscope/meshscope/model"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		err  error
		kind model.ErrorKind
	}{
		{errors.New(`Get "https://127.0.0.1:6444/version": dial tcp 127.0.0.1:6444: connect: connection refused`), model.ErrUnreachable},
		{errors.New(`Get "https://x/api": tls: failed to verify certificate: x509: certificate signed by unknown authority`), model.ErrTLS},
		{errors.New("something odd"), model.ErrOther},
	}
	for _, tc := range cases {
		if got := Classify(tc.err, "pods"); got.Kind != tc.kind {
			t.Errorf("Classify(%q) = %s, want %s", tc.err, got.Kind, tc.kind)
		}
	}
}
