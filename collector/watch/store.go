package watch

import "iter"

// The read side's access to a cache: every read of a watcher's caches (or
// of a what-if's overlays of them) goes through storeReader, typed by
// objectsOf, listOf and getOf. A cache holds one type of object (its
// informer's, after its transform); an object of another type — which no
// informer of ours stores — is skipped as absent.

// storeReader is what the read side takes of an informer's store.
type storeReader interface {
	List() []any
	ListKeys() []string
	GetByKey(key string) (item any, exists bool, err error)
}

// store is what the read side reads: the informer's cache, or a what-if's
// overlay of it.
func (h *informerHealth) store() storeReader {
	if h.overlay != nil {
		return h.overlay
	}
	return h.inf.GetStore()
}

// objectsOf yields every object of type T in s, for reads that filter or
// index as they go.
func objectsOf[T any](s storeReader) iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, o := range s.List() {
			if t, ok := o.(T); ok && !yield(t) {
				return
			}
		}
	}
}

// listOf is every object of type T in s (nil when there is none), in one
// allocation.
func listOf[T any](s storeReader) []T {
	objs := s.List()
	var out []T
	for _, o := range objs {
		if t, ok := o.(T); ok {
			if out == nil {
				out = make([]T, 0, len(objs))
			}
			out = append(out, t)
		}
	}
	return out
}

// getOf is the object of type T under key in s, and whether there is one.
func getOf[T any](s storeReader, key string) (T, bool) {
	o, ok, _ := s.GetByKey(key)
	t, isT := o.(T)
	return t, ok && isT
}
