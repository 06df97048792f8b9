package whatif

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Source is one -f argument: a file, a directory (its .yaml, .yml and
// .json files, not recursive, as kubectl apply -f without -R reads them),
// or "-" for stdin; Cluster is the CLUSTER of CLUSTER=FILE ("" for the
// default cluster).
type Source struct {
	Path, Cluster string
}

// ParseSource reads -f's argument: CLUSTER=PATH, or PATH. A path that
// holds "=" itself is read as a path when it exists.
func ParseSource(arg string) Source {
	if c, p, ok := strings.Cut(arg, "="); ok && c != "" && !strings.ContainsAny(c, `/\`) {
		if _, err := os.Stat(arg); err != nil {
			return Source{Path: p, Cluster: c}
		}
	}
	return Source{Path: arg}
}

// Object is one object read from a source, with where it was written.
type Object struct {
	Cluster string
	Object  *unstructured.Unstructured
	// File and Line locate it ("-" for stdin); Line is the first line of
	// its document.
	File string
	Line int
	// Delete deletes it even in a request that puts (a fix that replaces
	// one object with another).
	Delete bool
}

// Origin is FILE:LINE.
func (o Object) Origin() string { return o.File + ":" + strconv.Itoa(o.Line) }

// Read reads every source into objects, in order, each for its source's
// cluster or def. stdin is read for "-" (once).
func Read(srcs []Source, def string, stdin io.Reader) ([]Object, error) {
	var out []Object
	stdinRead := false
	for _, s := range srcs {
		cluster := s.Cluster
		if cluster == "" {
			cluster = def
		}
		files, err := filesOf(s.Path)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			var data []byte
			if f == "-" {
				if stdinRead {
					return nil, errors.New("-f -: stdin can be read once")
				}
				stdinRead = true
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(f)
			}
			if err != nil {
				return nil, fmt.Errorf("-f %s: %w", f, err)
			}
			objs, err := Decode(f, data)
			if err != nil {
				return nil, err
			}
			for i := range objs {
				objs[i].Cluster = cluster
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// filesOf lists a source's files.
func filesOf(path string) ([]string, error) {
	if path == "-" {
		return []string{"-"}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", path, err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", path, err)
	}
	var files []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("-f %s: no .yaml, .yml or .json file in the directory", path)
	}
	return files, nil
}

// document is one YAML document of a file and the line it starts on.
type document struct {
	text []byte
	line int
}

// splitDocuments splits a YAML stream at its "---" lines (JSON is one
// document).
func splitDocuments(data []byte) []document {
	var docs []document
	cur := document{line: 1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.TrimLeft(line, "-")) == "" {
			docs = append(docs, cur)
			cur = document{line: n + 1}
			continue
		}
		cur.text = append(cur.text, line...)
		cur.text = append(cur.text, '\n')
	}
	return append(docs, cur)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// Decode reads the objects of one file: YAML documents or JSON, each an
// object or a List of them. An error names the file and line.
func Decode(file string, data []byte) ([]Object, error) {
	var out []Object
	for _, d := range splitDocuments(data) {
		if isBlank(d.text) {
			continue
		}
		js, err := yaml.YAMLToJSON(d.text)
		if err != nil {
			line := d.line
			msg := err.Error()
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				n, _ := strconv.Atoi(m[1])
				// The parser names the line after the last at the end of
				// the input: keep it inside the document.
				last := max(1, strings.Count(strings.TrimRight(string(d.text), "\n"), "\n")+1)
				line += min(max(n, 1), last) - 1
				msg = strings.Replace(msg, m[0], "", 1)
			}
			msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
			msg = strings.ReplaceAll(strings.TrimPrefix(msg, "yaml: "), ": :", ":")
			return nil, fmt.Errorf("%s:%d: not YAML: %s", file, line, strings.Trim(msg, ": "))
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: not a Kubernetes object (a YAML mapping with apiVersion, kind and metadata): %s", file, d.line, err)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s", file, d.line, err)
			}
			for i := range l.Items {
				o, err := object(file, d.line, &l.Items[i])
				if err != nil {
					return nil, err
				}
				out = append(out, o)
			}
			continue
		}
		o, err := object(file, d.line, u)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no object in it", file)
	}
	return out, nil
}

// object checks one object and puts it in its namespace ("default" for a
// namespaced kind that names none, as kubectl does).
func object(file string, line int, u *unstructured.Unstructured) (Object, error) {
	o := Object{Object: u, File: file, Line: line}
	switch {
	case u.GetAPIVersion() == "":
		return o, fmt.Errorf("%s:%d: the object has no apiVersion", file, line)
	case u.GetKind() == "":
		return o, fmt.Errorf("%s:%d: the object has no kind", file, line)
	case u.GetName() == "":
		return o, fmt.Errorf("%s:%d: %s has no metadata.name", file, line, u.GetKind())
	}
	if err := checkIstioGateway(u); err != nil {
		return o, fmt.Errorf("%s:%d: Gateway %s: %v: the API server refuses it (its schema lists the modes), and istiod could not read it", file, line, u.GetName(), err)
	}
	if clusterScoped[u.GetKind()] {
		u.SetNamespace("")
	} else if u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	return o, nil
}

func isBlank(text []byte) bool {
	for _, l := range strings.Split(string(text), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
