package lab

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Each lab API server keeps an audit log of what the lab's test accounts
// (ServiceAccounts meshscope-lab-* in the system namespace, IssueLimitedToken)
// ask: metadata only, nothing of istiod's or the admin's traffic. Tests
// read it to prove that meshscope wrote nothing with a credential it tried.

const (
	auditPolicyFile = "audit-policy.yaml"
	auditLogFile    = "audit.log"
)

// auditPolicy logs the requests of the test accounts at Metadata level
// (who, verb, resource; no bodies) once they complete, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:` + SystemNamespace + `"]
- level: None
`

// AuditEvent is one request of the audit log.
type AuditEvent struct {
	User     string
	Verb     string
	Group    string
	Resource string
	Code     int
}

// TestAccount is the user name of the ServiceAccount IssueLimitedToken
// makes for name.
func TestAccount(name string) string {
	return "system:serviceaccount:" + SystemNamespace + ":meshscope-lab-" + name
}

// AuditEvents reads the audit log of cluster: every completed request of
// a ServiceAccount of the system namespace whose user name starts with
// userPrefix.
func (l *Lab) AuditEvents(cluster, userPrefix string) ([]AuditEvent, error) {
	c, err := l.cluster(cluster)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(c.dir, auditLogFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var e struct {
			Verb string `json:"verb"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				APIGroup string `json:"apiGroup"`
				Resource string `json:"resource"`
			} `json:"objectRef"`
			ResponseStatus *struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || !strings.HasPrefix(e.User.Username, userPrefix) {
			continue
		}
		ev := AuditEvent{User: e.User.Username, Verb: e.Verb}
		if e.ObjectRef != nil {
			ev.Group, ev.Resource = e.ObjectRef.APIGroup, e.ObjectRef.Resource
		}
		if e.ResponseStatus != nil {
			ev.Code = e.ResponseStatus.Code
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}
