package whatif

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string // kind namespace/name @line
		err        string
	}{
		{name: "two documents, a namespace defaulted, a comment-only document",
			text: "# nothing\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b, namespace: x}\n",
			want: []string{"Service default/a @3", "Namespace b @7"}},
		{name: "a List", text: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"}}]}`,
			want: []string{"Pod n/p @1"}},
		{name: "YAML error on the line it is", text: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: x\n   bad: indent\n",
			err: "f.yaml:10: not YAML"},
		{name: "no kind", text: "apiVersion: v1\nmetadata: {name: a}\n", err: "f.yaml:1: the object has no kind"},
		{name: "no name", text: "apiVersion: v1\nkind: Pod\nmetadata: {}\n", err: "f.yaml:1: Pod has no metadata.name"},
		{name: "empty", text: "# only a comment\n", err: "f.yaml: no object in it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Decode("f.yaml", []byte(c.text))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.Object.GetKind()+" "+objectName(o)+" @"+strings.TrimPrefix(o.Origin(), "f.yaml:"))
			}
			if strings.Join(got, ", ") != strings.Join(c.want, ", ") {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseSource(t *testing.T) {
	for in, want := range map[string]Source{
		"cluster2=a.yaml": {Path: "a.yaml", Cluster: "cluster2"},
		"a.yaml":          {Path: "a.yaml"},
		"dir/x=y.yaml":    {Path: "dir/x=y.yaml"},
		"-":               {Path: "-"},
	} {
		if got := ParseSource(in); got != want {
			t.Errorf("%s: %+v, want %+v", in, got, want)
		}
	}
}

// TestDecodeGatewayTLSMode: a Gateway server with a tls.mode istiod does
// not know is bad input, named by file and line, as the API server would
// refuse it.
func TestDecodeGatewayTLSMode(t *testing.T) {
	doc := "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: istio-system}\nspec:\n  servers:\n  - port: {number: 15443, name: tls, protocol: TLS}\n    tls: {mode: AUTO}\n    hosts: [\"*.local\"]\n"
	_, err := Decode("gw.yaml", []byte("---\n"+doc))
	if err == nil || !strings.Contains(err.Error(), `gw.yaml:2: Gateway gw: spec.servers[0]: tls.mode "AUTO" is not one of`) {
		t.Fatalf("error %v", err)
	}
	if _, err := Decode("gw.yaml", []byte(strings.Replace(doc, "AUTO}", "AUTO_PASSTHROUGH}", 1))); err != nil {
		t.Fatal(err)
	}
}
