package collector

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/meshscope/meshscope/collector/internal/errs"
	"github.com/meshscope/meshscope/model"
)

// meshFiles follows the mesh config files given instead of ConfigMap istio
// (Options.MeshConfigFiles), as istiod's file watcher does: a file is read
// at start and again whenever its size or modification time changes.
type meshFiles struct {
	mu    sync.Mutex
	files map[string]*meshFile // by config cluster ID, "" for every one
}

type meshFile struct {
	path string
	text string
	err  error // the last read failed (the last good text is kept)
	mod  time.Time
	size int64
}

// newMeshFiles reads every file once; a file that cannot be read is an
// error (a typo in a flag should not silently mean "defaults").
func newMeshFiles(paths map[string]string) (*meshFiles, error) {
	m := &meshFiles{files: map[string]*meshFile{}}
	for cluster, p := range paths {
		f := &meshFile{path: p}
		if err := f.read(); err != nil {
			what := "--mesh-config " + p
			if cluster != "" {
				what = fmt.Sprintf("--mesh-config %s=%s", cluster, p)
			}
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if _, err := model.ParseMeshConfig(f.text); err != nil {
			return nil, fmt.Errorf("--mesh-config %s: %w", p, err)
		}
		m.files[cluster] = f
	}
	return m, nil
}

func (f *meshFile) read() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	f.text, f.mod, f.size, f.err = string(b), st.ModTime(), st.Size(), nil
	return nil
}

// poll re-reads changed files every interval until ctx ends, calling
// changed after any file changed (or failed to read).
func (m *meshFiles) poll(ctx context.Context, interval time.Duration, changed func()) {
	if m == nil || len(m.files) == 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changedAny := false
		m.mu.Lock()
		for _, f := range m.files {
			st, err := os.Stat(f.path)
			switch {
			case err != nil:
				if f.err == nil {
					f.err, changedAny = err, true
				}
			case !st.ModTime().Equal(f.mod) || st.Size() != f.size || f.err != nil:
				if err := f.read(); err != nil {
					f.err = err
				}
				changedAny = true
			}
		}
		m.mu.Unlock()
		if changedAny {
			changed()
		}
	}
}

// get returns the file for a config cluster (or the one for every cluster).
func (m *meshFiles) get(cluster string) (meshFile, bool) {
	if m == nil {
		return meshFile{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[cluster]
	if !ok {
		f, ok = m.files[""]
	}
	if !ok {
		return meshFile{}, false
	}
	return *f, true
}

// meshConfigOf is the mesh config the istiod of a context cluster reads:
// its file when one is given, else key "mesh" of its ConfigMap istio (or
// istio-<revision>), else the defaults. Parsed texts are cached (the
// snapshot is rebuilt far more often than mesh config changes).
func (r *Registry) meshConfigOf(id string, w *watched) model.MeshConfig {
	return r.meshConfigIn(id, w, "")
}

// meshConfigIn is the mesh config of revision rev of id's istiod ("" for
// the predicted one, which a --mesh-config file replaces): ConfigMap
// istio-REV, else istiod's defaults.
func (r *Registry) meshConfigIn(id string, w *watched, rev string) model.MeshConfig {
	var text, source, readErr string
	if f, ok := r.meshFiles.get(id); ok && rev == "" {
		text, source = f.text, "file "+f.path
		if f.err != nil {
			readErr = "cannot read the file again (using its last content): " + errs.OneLine(f.err.Error())
		}
	} else {
		if rev == "" {
			rev = r.opts.Revision
			if w != nil {
				rev = w.ConfigRevision()
			}
		}
		name := r.opts.SystemNamespace + "/" + model.MeshConfigMapName(rev)
		source = "default (no ConfigMap " + name + ")"
		if w != nil {
			if t, found := w.MeshConfigIn(r.opts.SystemNamespace, rev); found {
				text, source = t, "configmap "+name
			}
		}
	}
	mc, ok := r.meshCache[text]
	if !ok {
		var err error
		mc, err = model.ParseMeshConfig(text)
		if err != nil {
			mc.Error = errs.OneLine(err.Error())
		}
		if len(r.meshCache) > 16 {
			clear(r.meshCache)
		}
		r.meshCache[text] = mc
	}
	mc.Cluster, mc.Source = id, source
	if readErr != "" {
		mc.Error = readErr
	}
	return mc
}
