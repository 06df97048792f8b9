package watch

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/meshscope/meshscope/internal/meshtest"
)

// TestScopesAreWhatListWatchesSelect: every informer's scope — what a
// what-if routes by — is what its list-watch asks the API server for:
// the resource of its kind, in its namespace, with its name and label
// selector.
func TestScopesAreWhatListWatchesSelect(t *testing.T) {
	type list struct{ group, resource, namespace, labels, fields string }
	var mu sync.Mutex
	asked := map[list]bool{}
	record := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if la, ok := a.(k8stesting.ListAction); ok {
			r := la.GetListRestrictions()
			l := list{la.GetResource().Group, la.GetResource().Resource, la.GetNamespace(), "", ""}
			if r.Labels != nil {
				l.labels = r.Labels.String()
			}
			if r.Fields != nil {
				l.fields = r.Fields.String()
			}
			mu.Lock()
			asked[l] = true
			mu.Unlock()
		}
		return false, nil, nil
	}
	c := fake.NewClientset()
	c.PrependReactor("list", "*", record)
	dyn := meshtest.FakeIstio()
	dyn.PrependReactor("list", "*", record)
	cfg := &Config{SystemNamespace: "istio-system", SyncTimeout: time.Minute, HealthInterval: time.Hour, HealthTimeout: time.Second}
	w := New(c, cfg, slog.New(slog.DiscardHandler), nil, true, func() {}, func() {})
	w.AddGatewayInformer(dyn)
	w.AddIstioConfigInformers(dyn)
	ctx, cancel := context.WithCancel(context.Background())
	var group sync.WaitGroup
	defer group.Wait()
	defer cancel()
	w.Start(ctx, &group, nil)
	for deadline := time.Now().Add(10 * time.Second); !w.Synced(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not synced")
		}
	}
	if len(w.infs) != 18 {
		t.Fatalf("%d informers, want 18 (every one a context cluster runs)", len(w.infs))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range w.infs {
		if h.scope.kind.Kind == "" {
			t.Errorf("%s: no kind: a what-if cannot route to it", h.name)
			continue
		}
		want := list{group: h.scope.kind.Group, namespace: h.scope.namespace, labels: h.scope.selector}
		if h.scope.name != "" {
			want.fields = fields.OneTermEqualSelector("metadata.name", h.scope.name).String()
		}
		// The resource of the kind: its plural as kubectl guesses it
		// ("serviceentries"), or with an s ("gateways", not "gatewaies").
		plural, _ := meta.UnsafeGuessKindToResource(h.scope.kind.WithVersion("v1"))
		want.resource = plural.Resource
		withS := want
		withS.resource = strings.ToLower(h.scope.kind.Kind) + "s"
		if !asked[want] && !asked[withS] {
			t.Errorf("%s: scope %+v, but no list asked for %+v (asked: %v)", h.name, h.scope, want, asked)
		}
	}
}
