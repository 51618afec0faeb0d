// Package deploy holds what runs Mneme outside this repository's harness: the
// Dockerfiles, the compose file and the Kubernetes manifests. No container
// engine or cluster is at hand where the tests run, so its test checks them
// with what is: the YAML parsed and its references followed, every
// environment variable one that memoryd reads, the Dockerfile's stages and
// user, and memoryd's packages building without cgo.
package deploy
