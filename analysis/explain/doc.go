// Package explain puts what istiod sends a proxy (xdsclient's decoded EDS)
// next to what it should send (horizon's prediction): it attributes every
// actual endpoint to a pod or a gateway, compares, and says each difference
// as a sentence with its likely cause. It also finds the mesh-wide problems
// that doctor lists.
package explain
