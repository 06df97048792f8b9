// Package meshtest holds the test fixtures shared by the packages that read
// a mesh: the lab mesh (clusters, networks, gateways, services, endpoints)
// as a model.Snapshot, and test certificates. Tests import it; the product
// does not.
package meshtest
