package whatif

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var origin = regexp.MustCompile(`^f\.yaml(:(\d+))?: `)

// FuzzDecode: a what-if file decodes into objects that each have an
// apiVersion, a kind and a name, a namespace exactly when their kind has
// one, and a line within the file; or into one error that names the file
// (and a line within it) — never a panic.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n",
		"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n# c\n",
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}`,
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: [x\n",
		"- a\n- b\n",
		"apiVersion: v1\nkind: List\nitems: [1]\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		objs, err := Decode("f.yaml", []byte(text))
		if err != nil {
			msg := err.Error()
			m := origin.FindStringSubmatch(msg)
			if m == nil || strings.Contains(msg, "\n") {
				t.Fatalf("error %q does not start with the file (one line)", msg)
			}
			if m[2] != "" {
				if n, _ := strconv.Atoi(m[2]); n < 1 || n > lines {
					t.Fatalf("error %q names line %d of a %d-line file", msg, n, lines)
				}
			}
			return
		}
		for _, o := range objs {
			u := o.Object
			if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
				t.Fatalf("object without apiVersion, kind or name: %v", u.Object)
			}
			if clusterScoped[u.GetKind()] != (u.GetNamespace() == "") {
				t.Fatalf("%s %q in namespace %q", u.GetKind(), u.GetName(), u.GetNamespace())
			}
			if o.Line < 1 || o.Line > lines {
				t.Fatalf("object at line %d of a %d-line file", o.Line, lines)
			}
		}
	})
}
